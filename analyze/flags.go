package analyze

import (
	"fmt"
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
)

// LateArrivalLimit is the p99 of the load generator's send lateness (how
// long after its due time each request left) above which a trial is flagged
// late-arrivals: its latency then holds a delay of the generator's own. It
// is looser than the 50 µs toll keeps on a quiet machine, so that a flag
// means the generator was held up (a busy or shared machine), not the
// ordinary jitter of a virtual machine's wake-ups.
const LateArrivalLimit = 100 * time.Microsecond

// invalidates says whether a flag of this code means that its trial did
// not measure what was planned: it was cut short, failed requests, missed
// its rate or left requests unsent, or a variant meant to export sent
// nothing (or had all of it refused). The other flags (throttled, saturated, steal, scrape, nmt, late-arrivals) describe the
// conditions of a measurement that still stands.
func invalidates(code string) bool {
	switch code {
	case FlagInterrupted, FlagShort, FlagErrors, FlagRateMissed, FlagUnsent, FlagNoTelemetry, FlagExportsRejected, FlagFailed:
		return true
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
	if t.Startup != nil || t.Idle || (t.Job != nil && tc.Costs[JobSpans] != 0) {
		// A start sends nothing yet; a job's spans are counted per run; an
		// idle agent may rightly send nothing (no request, no span).
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
	}
	if e := tc.Costs[ErrorRate]; e > 0 {
		add(FlagErrors, "%.2f%% of requests failed%s", e, failures(t.Load.Errors, t.Load.ErrorExamples))
	}
	if sched > sent {
		add(FlagUnsent, "%d of %d scheduled requests were never sent (load generator or connections saturated)", sched-sent, sched)
	}
	if got := t.Window().Seconds(); t.PlannedS > 0 && got < 0.9*t.PlannedS {
		add(FlagShort, "measured window was %.1fs of the %.1fs planned", got, t.PlannedS)
	}
	for _, sat := range tc.saturated {
		add(FlagSaturated, "CPU %d, which runs no measured service, was %.0f%% busy: toll's load generator may have been starved, so rate and latency may be its own", sat.cpu, sat.busy)
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
	}
	if st := tc.Costs[Steal]; st > StealLimit {
		add(FlagSteal, "the hypervisor took %.1f%% of the CPUs' time (steal): the machine was shared", st)
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
		}
	}
	return fs
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
