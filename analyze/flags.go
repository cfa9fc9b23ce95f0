package analyze

import (
	"iter"
	"slices"
	"time"

	"github.com/tollperf/toll/record"
)

// Flag marks a trial whose figures break one of the method's assumptions.
// A flagged trial is shown, never silently dropped.
type Flag struct {
	Trial   int    `json:"trial"`
	Variant string `json:"variant"`
	Round   int    `json:"round"`
	Code    string `json:"code"`
	// Args are the names and numbers the flag's words use, in the order
	// its code's comment gives. Message is the flag in words: analyze
	// leaves it empty, report fills it in when it writes summary.json,
	// and a flag read back has its Message alone.
	Args    Args   `json:"-"`
	Message string `json:"message"`
	// Value is the figure the flag was raised for, in the unit its code
	// measures (FlagGroup.Worst says which): a late-arrivals flag's p99
	// lateness in µs, a steal flag's share in percent; 0 for a code with
	// no figure.
	Value float64 `json:"value,omitempty"`
}

// Flag codes, each with the Args of its words in order.
const (
	// FlagRateMissed: the achieved rate was below 99% of the target.
	// Args: achieved (req/s), target (req/s).
	FlagRateMissed = "rate-missed"
	// FlagErrors: some requests failed. Args: the share that failed (%),
	// then by cause (could not connect, timed out, answered 4xx,
	// answered 5xx, failed otherwise) the counts ([]int) and the load
	// generator's example of each ([]string, "" for none).
	FlagErrors = "errors"
	// FlagUnsent: scheduled requests were never sent. Args: unsent,
	// scheduled.
	FlagUnsent = "unsent"
	// FlagShort: the window was much shorter than asked. Args: measured
	// (s), planned (s).
	FlagShort = "short"
	// FlagNoTelemetry: a variant that exports sent nothing. No Args.
	FlagNoTelemetry = "no-telemetry"
	// FlagInterrupted: the trial was cut short. Args: its error.
	FlagInterrupted = "interrupted"
	// FlagThrottled: a service was throttled by its CPU limit. Args:
	// service, times.
	FlagThrottled = "throttled"
	// FlagSaturated: a CPU outside the services' was nearly fully busy.
	// Args: the CPU, its busy share (%).
	FlagSaturated = "saturated"
	// FlagSteal: the hypervisor took a share of the CPUs. Args: the
	// share (%).
	FlagSteal = "steal"
	// FlagScrape: a service's own metrics could not be read. Args:
	// service, the error.
	FlagScrape = "scrape"
	// FlagNMT: a JVM's Native Memory Tracking could not be read. Args:
	// service, the error.
	FlagNMT = "nmt"
	// FlagLateArrival: the load generator sent requests late (p99 above
	// LateArrivalLimit). Args: p99 (µs), max (µs), the limit (µs),
	// toll's threads' wait to run (ms, 0 unknown), what ran longest on
	// the load CPUs ([]record.CPUHolder).
	FlagLateArrival = "late-arrivals"
	// FlagLatencyUnreadable marks a trial whose latency histogram could
	// not be read (corrupt, missing, or beyond toll's bounds): its latency
	// is left out, its other costs stand. Args: the error.
	FlagLatencyUnreadable = "latency-unreadable"
	// FlagProfile marks a profiled trial whose profile failed, wholly or
	// for some of its services (the profiler died, or its samples could
	// not be read): where the CPU goes leaves its round out, or lacks
	// those services' stacks in it. Its costs stand. Args: the services,
	// the profiler ("" unknown), whether the others' stacks were kept,
	// the error's first line.
	FlagProfile = "profile"
)

// LateArrivalLimit is the p99 of the load generator's send lateness (how
// long after its due time each request left) above which a trial is flagged
// late-arrivals: its latency then holds a delay of the generator's own. It
// is looser than the 50 µs toll keeps on a quiet machine, so that a flag
// means the generator was held up (a busy or shared machine), not the
// ordinary jitter of a virtual machine's wake-ups.
const LateArrivalLimit = 100 * time.Microsecond

// Invalidates says whether a flag of this code means that its trial did
// not measure what was planned: it was cut short, failed requests, missed
// its rate or left requests unsent, or a variant meant to export sent
// nothing (or had all of it refused). The other flags (throttled, saturated, steal, scrape, nmt, late-arrivals) describe the
// conditions of a measurement that still stands.
func Invalidates(code string) bool {
	switch code {
	case FlagInterrupted, FlagShort, FlagErrors, FlagRateMissed, FlagUnsent, FlagNoTelemetry, FlagExportsRejected, FlagFailed:
		return true
	}
	return false
}

// unplanned says whether a trial's flags say that it measured something
// other than what was planned: a window much shorter than asked (short),
// or a variant that exports whose telemetry went nowhere (no-telemetry,
// exports-rejected), whose costs are then not those of an agent that
// delivers. Such a trial is listed with its flags but left out of the
// comparisons, as a trial cut short is. The other flags that invalidate
// (errors, rate-missed, unsent) describe a load that went wrong for the
// variant as planned: their trials stay, and make the run invalid when
// every one is flagged. A trial cut short that includeInterrupted keeps is
// kept whatever else it is flagged (its window is short because it was
// cut).
func unplanned(t *record.Trial, flags []Flag, includeInterrupted bool) bool {
	if t.Interrupted && includeInterrupted {
		return false
	}
	for _, f := range flags {
		switch f.Code {
		case FlagShort, FlagNoTelemetry, FlagExportsRejected:
			return true
		}
	}
	return false
}

// FlagExportsRejected marks a variant that exports whose every export
// toll's sink refused: its agent is not working either. Args: the
// refused requests/s, KiB/s.
const FlagExportsRejected = "exports-rejected"

// SaturatedBusy is the busy share (percent) above which a CPU that runs no
// measured service counts as saturated, and StealLimit the steal share
// (percent of all CPUs' time) above which a trial is flagged.
const (
	SaturatedBusy = 90.0
	StealLimit    = 2.0
)

// flagTelemetry flags a trial of a variant that exports telemetry when
// toll's sink received none over the trial's whole cycle (costs attributed
// by attributeTelemetry). A trial whose telemetry attributeTelemetry left
// out (its cycle began with a warm-up at another load) is not judged.
func flagTelemetry(t *record.Trial, tc *TrialCosts) []Flag {
	if tc.telemetryLeftOut {
		return nil
	}
	if t.Startup != nil || t.Idle || t.Job != nil {
		// A start sends nothing yet; an idle agent may rightly send nothing
		// (no request, no span), and so may a job's agent when the job does
		// no traced work (`java -version`): a job's spans are its own cost,
		// job_spans, read in the table rather than judged here.
		return nil
	}
	if !t.Exports || tc.Costs[Spans] != 0 || tc.Costs[ExportBytes] != 0 {
		return nil
	}
	f := Flag{Trial: t.Index, Variant: t.Variant, Round: t.Round, Code: FlagNoTelemetry}
	if tc.Costs[Rejected] > 0 {
		f.Code, f.Args = FlagExportsRejected, Args{tc.Costs[Rejected], tc.Costs[RejectedBytes]}
	}
	return []Flag{f}
}

func flagTrial(t *record.Trial, tc *TrialCosts, sched, sent uint64) []Flag {
	var fs []Flag
	add := func(code string, args ...any) {
		fs = append(fs, Flag{Trial: t.Index, Variant: t.Variant, Round: t.Round, Code: code, Args: args})
	}
	// figure sets the figure of the flag just added.
	figure := func(v float64) { fs[len(fs)-1].Value = v }
	if t.Interrupted {
		add(FlagInterrupted, t.Error)
	}
	// A window holds a whole number of requests: at 25 req/s a 1.5 s
	// window is due 37.5, and 37 on time is not a missed rate. One
	// request of slack keeps the flag to rates really missed.
	slack := 0.0
	if w := tc.Window.Length() * t.Share(); w > 0 {
		slack = 1 / w
	}
	if got := tc.Costs[Throughput]; t.TargetRate > 0 && got+slack < 0.99*t.TargetRate {
		add(FlagRateMissed, got, t.TargetRate)
		figure(100 * got / t.TargetRate)
	}
	if e := tc.Costs[ErrorRate]; e > 0 {
		counts, examples := failures(t.Load.Errors, t.Load.ErrorExamples)
		add(FlagErrors, e, counts, examples)
		figure(e)
	}
	if sched > sent {
		add(FlagUnsent, int(sched-sent), int(sched))
		figure(float64(sched - sent))
	}
	if got := t.Window().Seconds(); t.PlannedS > 0 && got < 0.9*t.PlannedS {
		add(FlagShort, got, t.PlannedS)
		figure(100 * got / t.PlannedS)
	}
	for _, sat := range tc.saturated {
		add(FlagSaturated, sat.cpu, sat.busy)
		figure(sat.busy)
	}
	if p99 := t.Load.LatenessP99US; p99 > LateArrivalLimit.Microseconds() {
		add(FlagLateArrival, int(p99), int(t.Load.LatenessMaxUS), int(LateArrivalLimit.Microseconds()), t.Load.CPUWaitMS, t.Load.LoadCPUsHeldBy)
		figure(float64(p99))
	}
	if st := tc.Costs[Steal]; st > StealLimit {
		add(FlagSteal, st)
		figure(st)
	}
	if p := t.Profile; p != nil && p.Error != "" {
		// A service whose profiler fails in every trial would leave
		// every round out: the others' stacks are kept.
		add(FlagProfile, p.Services, p.Profiler, p.File != "", oneLine(p.Error))
	}
	for _, s := range t.Samples {
		if s.ScrapeError != "" {
			add(FlagScrape, s.Service, s.ScrapeError)
		}
		if s.NMTError != "" {
			add(FlagNMT, s.Service, s.NMTError)
		}
		if n := len(s.Points); n > 1 && s.Points[n-1].NrThrottled > s.Points[0].NrThrottled {
			add(FlagThrottled, s.Service, int(s.Points[n-1].NrThrottled-s.Points[0].NrThrottled))
			figure(float64(s.Points[n-1].NrThrottled - s.Points[0].NrThrottled))
		}
	}
	return fs
}

// failures returns how a trial's requests failed, by cause (could not
// connect, timed out, answered 4xx, answered 5xx, failed otherwise): the
// count of each, and the example the load generator kept of it.
func failures(e record.ErrorCounts, x *record.ErrorExamples) (counts []int, examples []string) {
	if x == nil {
		x = &record.ErrorExamples{}
	}
	return []int{int(e.Connect), int(e.Timeout), int(e.HTTP4xx), int(e.HTTP5xx), int(e.Other)},
		[]string{x.Connect, x.Timeout, x.HTTP4xx, x.HTTP5xx, x.Other}
}

// FlagGroup is every flag of one cause over the run: which trials it
// marked, and the worst figure among them. A report writes a line per
// group, not per trial: a machine's housekeeping can flag every trial.
type FlagGroup struct {
	Code string `json:"code"`
	// Trials are the indexes of the trials flagged, in run order, each
	// once; Of is the number of trials analysed.
	Trials []int `json:"trials"`
	Of     int   `json:"of"`
	// Worst is the worst of the flags' figures (Flag.Value), absent for a
	// code without one: the highest late-arrivals p99 (µs), steal,
	// saturated CPU or error share (percent), unsent requests or
	// throttlings (a count); the lowest share of the target rate
	// achieved (rate-missed) or of the planned window measured (short),
	// in percent.
	Worst *float64 `json:"worst,omitempty"`
	// Invalidates says that the cause means a flagged trial did not
	// measure what was planned; without it the flags describe the
	// conditions of measurements that stand.
	Invalidates bool `json:"invalidates"`
	// Excluded counts the flagged trials left out of the comparisons.
	Excluded int `json:"excluded,omitempty"`
	// First is the first flag of the cause: its trial, and its message
	// for a cause that has no figure (the error a trial was interrupted
	// with, the service whose metrics could not be read).
	First Flag `json:"first"`
}

// lowerIsWorse says whether a code's figure is worse the lower it is.
func lowerIsWorse(code string) bool { return code == FlagRateMissed || code == FlagShort }

// hasFigure says whether flags of code carry a figure (Flag.Value).
func hasFigure(code string) bool {
	switch code {
	case FlagLateArrival, FlagSteal, FlagSaturated, FlagErrors, FlagUnsent, FlagThrottled, FlagRateMissed, FlagShort:
		return true
	}
	return false
}

// groupFlags groups flags by code, the codes that invalidate a trial first
// and then by the number of trials they flagged, most first, so that the
// line that matters most leads. of is the number of trials analysed and
// excluded says whether a trial was left out of the comparisons.
func groupFlags(flags []Flag, of int, excluded func(trial int) bool) []FlagGroup {
	var groups []FlagGroup
	at := map[string]int{}
	for _, f := range flags {
		i, ok := at[f.Code]
		if !ok {
			i = len(groups)
			at[f.Code] = i
			groups = append(groups, FlagGroup{Code: f.Code, Of: of, Invalidates: Invalidates(f.Code), First: f})
		}
		g := &groups[i]
		if hasFigure(f.Code) {
			if g.Worst == nil {
				v := f.Value
				g.Worst = &v
			} else if lowerIsWorse(f.Code) && f.Value < *g.Worst || !lowerIsWorse(f.Code) && f.Value > *g.Worst {
				*g.Worst = f.Value
			}
		}
		if slices.Contains(g.Trials, f.Trial) {
			continue // a second throttled service of the same trial
		}
		g.Trials = append(g.Trials, f.Trial)
		if excluded(f.Trial) {
			g.Excluded++
		}
	}
	slices.SortStableFunc(groups, func(a, b FlagGroup) int {
		if a.Invalidates != b.Invalidates {
			if a.Invalidates {
				return -1
			}
			return 1
		}
		return len(b.Trials) - len(a.Trials)
	})
	return groups
}

// AllFlags yields every flag s holds: the run's, each trial's, and each
// group's first, so that a report can fill in their words.
func (s *Summary) AllFlags() iter.Seq[*Flag] {
	return func(yield func(*Flag) bool) {
		each := func(fs []Flag) bool {
			for i := range fs {
				if !yield(&fs[i]) {
					return false
				}
			}
			return true
		}
		if !each(s.Flags) {
			return
		}
		for _, tc := range s.Trials {
			if !each(tc.Flags) {
				return
			}
		}
		for i := range s.FlagGroups {
			if !yield(&s.FlagGroups[i].First) {
				return
			}
		}
	}
}
