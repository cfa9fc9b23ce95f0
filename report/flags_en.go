package report

import (
	"fmt"
	"strings"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// FlagText returns flag f in English: its words for its code and
// arguments (analyze's flag codes name them), or its Message when it was
// read back from a summary.json.
func FlagText(f analyze.Flag) string {
	if f.Message != "" {
		return f.Message
	}
	a := f.Args
	switch f.Code {
	case analyze.FlagInterrupted:
		return "trial was interrupted: " + a.Str(0)
	case analyze.FlagRateMissed:
		return fmt.Sprintf("achieved %.1f req/s, below 99%% of the %.0f req/s target", a.Float(0), a.Float(1))
	case analyze.FlagErrors:
		return fmt.Sprintf("%.2f%% of requests failed%s", a.Float(0), failuresEN(a.Ints(1), a.Strs(2)))
	case analyze.FlagUnsent:
		return fmt.Sprintf("%d of %d scheduled requests were never sent (load generator or connections saturated)", a.Int(0), a.Int(1))
	case analyze.FlagShort:
		return fmt.Sprintf("measured window was %.1fs of the %.1fs planned", a.Float(0), a.Float(1))
	case analyze.FlagSaturated:
		return fmt.Sprintf("CPU %d, which runs no measured service, was %.0f%% busy: toll's load generator may have been starved, so rate and latency may be its own", a.Int(0), a.Float(1))
	case analyze.FlagLateArrival:
		return lateArrivalEN(a)
	case analyze.FlagSteal:
		return fmt.Sprintf("the hypervisor took %.1f%% of the CPUs' time (steal): the machine was shared", a.Float(0))
	case analyze.FlagProfile:
		what := "its round is left out of where the CPU goes"
		if a.Bool(2) {
			what = "where the CPU goes lacks those stacks in its round"
		}
		profiler := a.Str(1)
		if profiler == "" {
			profiler = "the profiler"
		}
		return fmt.Sprintf("the profile of %s failed (%s), so %s: %s", strings.Join(a.Strs(0), ", "), profiler, what, a.Str(3))
	case analyze.FlagScrape:
		return fmt.Sprintf("%s: its metrics could not be scraped, so the trial lacks their rows: %s", a.Str(0), a.Str(1))
	case analyze.FlagNMT:
		return fmt.Sprintf("%s: no Native Memory Tracking summary, so the trial lacks JVM committed and off-heap: %s", a.Str(0), a.Str(1))
	case analyze.FlagThrottled:
		return fmt.Sprintf("%s was throttled %d times by its CPU limit", a.Str(0), a.Int(1))
	case analyze.FlagNoTelemetry:
		return "variant is configured to export telemetry but toll's sink received none over the trial's cycle"
	case analyze.FlagExportsRejected:
		return fmt.Sprintf("variant is configured to export telemetry but toll's sink rejected all of it (%.2f requests/s, %.1f KiB/s): see the sink's limits and the agent's log",
			a.Float(0), a.Float(1))
	case analyze.FlagLatencyUnreadable:
		return "latency left out: " + a.Str(0)
	case analyze.FlagFailed:
		if a.Bool(0) {
			return "job failed: " + a.Str(1)
		}
		return "start failed: " + a.Str(1)
	}
	return f.Code
}

// lateArrivalEN returns a late-arrivals flag's words: how late, how long
// toll's threads waited to run, and what ran on the load CPUs meanwhile.
func lateArrivalEN(a analyze.Args) string {
	msg := fmt.Sprintf("the load generator sent requests late: p99 %d µs (max %d µs) after their due time, above %d µs", a.Int(0), a.Int(1), a.Int(2))
	if w := a.Float(3); w > 0 {
		msg += fmt.Sprintf("; toll's threads waited %.1f ms in all to run during the load", w)
	}
	var hs []record.CPUHolder
	if len(a) > 4 {
		hs, _ = a[4].([]record.CPUHolder)
	}
	if len(hs) > 0 {
		msg += "; on the load CPUs meanwhile ran " + holdersEN(hs)
	}
	return msg + " (see Arrivals)"
}

// holdersEN names the three processes or kernel threads that ran longest
// on the load CPUs during a trial's load, with their CPU time.
func holdersEN(hs []record.CPUHolder) string {
	var parts []string
	for _, h := range hs[:min(len(hs), 3)] {
		kernel := ""
		if h.Kernel {
			kernel = ", a kernel thread"
		}
		parts = append(parts, fmt.Sprintf("%s (pid %d%s) %.0f ms", h.Name, h.PID, kernel, h.MS))
	}
	if n := len(hs) - 3; n > 0 {
		parts = append(parts, fmt.Sprintf("%d more", n))
	}
	return strings.Join(parts, ", ")
}

// failuresEN says how a trial's requests failed, by cause, with the
// example the load generator kept of each: " (5 could not connect: dial
// tcp 127.0.0.1:1: connect: connection refused)". Empty when nothing
// failed. counts and examples are by cause, in analyze's order.
func failuresEN(counts []int, examples []string) string {
	causes := []string{"could not connect", "timed out", "answered 4xx", "answered 5xx", "failed otherwise"}
	var parts []string
	for i, n := range counts {
		if n == 0 || i >= len(causes) {
			continue
		}
		part := fmt.Sprintf("%d %s", n, causes[i])
		if i < len(examples) && examples[i] != "" {
			part += ": " + examples[i]
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
