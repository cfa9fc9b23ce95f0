package analyze

import (
	"fmt"
	"slices"
	"strings"
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
	Message string `json:"message"`
	// Value is the figure the flag was raised for, in the unit its code
	// measures (FlagGroup.Worst says which): a late-arrivals flag's p99
	// lateness in µs, a steal flag's share in percent; 0 for a code with
	// no figure.
	Value float64 `json:"value,omitempty"`
}

// Flag codes.
const (
	FlagRateMissed  = "rate-missed"   // achieved rate below 99% of target
	FlagErrors      = "errors"        // some requests failed
	FlagUnsent      = "unsent"        // scheduled requests never sent
	FlagShort       = "short"         // the window was much shorter than asked
	FlagNoTelemetry = "no-telemetry"  // a variant that exports sent nothing
	FlagInterrupted = "interrupted"   // the trial was cut short
	FlagThrottled   = "throttled"     // a service was throttled by its CPU limit
	FlagSaturated   = "saturated"     // a CPU outside the services' was nearly fully busy
	FlagSteal       = "steal"         // the hypervisor took a share of the CPUs
	FlagScrape      = "scrape"        // a service's own metrics could not be read
	FlagNMT         = "nmt"           // a JVM's Native Memory Tracking could not be read
	FlagLateArrival = "late-arrivals" // the load generator sent requests late (p99 above LateArrivalLimit)
	// FlagLatencyUnreadable marks a trial whose latency histogram could
	// not be read (corrupt, missing, or beyond toll's bounds): its latency
	// is left out, its other costs stand.
	FlagLatencyUnreadable = "latency-unreadable"
	// FlagProfile marks a profiled trial whose profile failed, wholly or
	// for some of its services (the profiler died, or its samples could
	// not be read): where the CPU goes leaves its round out, or lacks
	// those services' stacks in it. Its costs stand.
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
// toll's sink refused: its agent is not working either.
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
// by attributeTelemetry).
func flagTelemetry(t *record.Trial, tc *TrialCosts) []Flag {
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
	f := Flag{Trial: t.Index, Variant: t.Variant, Round: t.Round, Code: FlagNoTelemetry,
		Message: "variant is configured to export telemetry but toll's sink received none over the trial's cycle"}
	if tc.Costs[Rejected] > 0 {
		f.Code = FlagExportsRejected
		f.Message = fmt.Sprintf("variant is configured to export telemetry but toll's sink rejected all of it (%.2f requests/s, %.1f KiB/s): see the sink's limits and the agent's log",
			tc.Costs[Rejected], tc.Costs[RejectedBytes])
	}
	return []Flag{f}
}

func flagTrial(t *record.Trial, tc *TrialCosts, sched, sent uint64) []Flag {
	var fs []Flag
	add := func(code, format string, args ...any) {
		fs = append(fs, Flag{Trial: t.Index, Variant: t.Variant, Round: t.Round, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	// figure sets the figure of the flag just added.
	figure := func(v float64) { fs[len(fs)-1].Value = v }
	if t.Interrupted {
		add(FlagInterrupted, "trial was interrupted: %s", t.Error)
	}
	// A window holds a whole number of requests: at 25 req/s a 1.5 s
	// window is due 37.5, and 37 on time is not a missed rate. One
	// request of slack keeps the flag to rates really missed.
	slack := 0.0
	if w := tc.Window.Length() * t.Share(); w > 0 {
		slack = 1 / w
	}
	if got := tc.Costs[Throughput]; t.TargetRate > 0 && got+slack < 0.99*t.TargetRate {
		add(FlagRateMissed, "achieved %.1f req/s, below 99%% of the %.0f req/s target", got, t.TargetRate)
		figure(100 * got / t.TargetRate)
	}
	if e := tc.Costs[ErrorRate]; e > 0 {
		add(FlagErrors, "%.2f%% of requests failed%s", e, failures(t.Load.Errors, t.Load.ErrorExamples))
		figure(e)
	}
	if sched > sent {
		add(FlagUnsent, "%d of %d scheduled requests were never sent (load generator or connections saturated)", sched-sent, sched)
		figure(float64(sched - sent))
	}
	if got := t.Window().Seconds(); t.PlannedS > 0 && got < 0.9*t.PlannedS {
		add(FlagShort, "measured window was %.1fs of the %.1fs planned", got, t.PlannedS)
		figure(100 * got / t.PlannedS)
	}
	for _, sat := range tc.saturated {
		add(FlagSaturated, "CPU %d, which runs no measured service, was %.0f%% busy: toll's load generator may have been starved, so rate and latency may be its own", sat.cpu, sat.busy)
		figure(sat.busy)
	}
	if p99 := t.Load.LatenessP99US; p99 > LateArrivalLimit.Microseconds() {
		msg := fmt.Sprintf("the load generator sent requests late: p99 %d µs (max %d µs) after their due time, above %d µs",
			p99, t.Load.LatenessMaxUS, LateArrivalLimit.Microseconds())
		if w := t.Load.CPUWaitMS; w > 0 {
			msg += fmt.Sprintf("; toll's threads waited %.1f ms in all to run during the load", w)
		}
		if hs := t.Load.LoadCPUsHeldBy; len(hs) > 0 {
			msg += "; on the load CPUs meanwhile ran " + describeHolders(hs)
		}
		add(FlagLateArrival, "%s (see Arrivals)", msg)
		figure(float64(p99))
	}
	if st := tc.Costs[Steal]; st > StealLimit {
		add(FlagSteal, "the hypervisor took %.1f%% of the CPUs' time (steal): the machine was shared", st)
		figure(st)
	}
	if p := t.Profile; p != nil && p.Error != "" {
		add(FlagProfile, "%s", profileFailure(p))
	}
	for _, s := range t.Samples {
		if s.ScrapeError != "" {
			add(FlagScrape, "%s: its metrics could not be scraped, so the trial lacks their rows: %s", s.Service, s.ScrapeError)
		}
		if s.NMTError != "" {
			add(FlagNMT, "%s: no Native Memory Tracking summary, so the trial lacks JVM committed and off-heap: %s", s.Service, s.NMTError)
		}
		if n := len(s.Points); n > 1 && s.Points[n-1].NrThrottled > s.Points[0].NrThrottled {
			add(FlagThrottled, "%s was throttled %d times by its CPU limit", s.Service, s.Points[n-1].NrThrottled-s.Points[0].NrThrottled)
			figure(float64(s.Points[n-1].NrThrottled - s.Points[0].NrThrottled))
		}
	}
	return fs
}

// profileFailure says which services' profile failed in a trial and how,
// and what the analysis of where the CPU goes does without it.
func profileFailure(p *record.TrialProfile) string {
	what := "its round is left out of where the CPU goes"
	if p.File != "" {
		// A service whose profiler fails in every trial would leave
		// every round out: the others' stacks are kept.
		what = "where the CPU goes lacks those stacks in its round"
	}
	profiler := p.Profiler
	if profiler == "" {
		profiler = "the profiler"
	}
	return fmt.Sprintf("the profile of %s failed (%s), so %s: %s", strings.Join(p.Services, ", "), profiler, what, oneLine(p.Error))
}

// describeHolders names the three processes or kernel threads that ran
// longest on the load CPUs during a trial's load, with their CPU time.
func describeHolders(hs []record.CPUHolder) string {
	var parts []string
	for _, h := range hs[:min(len(hs), 3)] {
		parts = append(parts, fmt.Sprintf("%s (pid %d%s) %.0f ms", h.Name, h.PID, kernelThread(h.Kernel), h.MS))
	}
	if n := len(hs) - 3; n > 0 {
		parts = append(parts, fmt.Sprintf("%d more", n))
	}
	return strings.Join(parts, ", ")
}

// kernelThread is what a holder's description adds when it is a kernel
// thread.
func kernelThread(kernel bool) string {
	if kernel {
		return ", a kernel thread"
	}
	return ""
}

// failures says how a trial's requests failed, by cause, with the example
// the load generator kept of each: " (5 could not connect: dial tcp
// 127.0.0.1:1: connect: connection refused)". Empty when nothing failed.
func failures(e record.ErrorCounts, x *record.ErrorExamples) string {
	if x == nil {
		x = &record.ErrorExamples{}
	}
	var parts []string
	for _, c := range []struct {
		n       uint64
		what    string
		example string
	}{
		{e.Connect, "could not connect", x.Connect},
		{e.Timeout, "timed out", x.Timeout},
		{e.HTTP4xx, "answered 4xx", x.HTTP4xx},
		{e.HTTP5xx, "answered 5xx", x.HTTP5xx},
		{e.Other, "failed otherwise", x.Other},
	} {
		if c.n == 0 {
			continue
		}
		part := fmt.Sprintf("%d %s", c.n, c.what)
		if c.example != "" {
			part += ": " + c.example
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
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
