package report

import (
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestFlagText checks the English of each flag from its arguments, and
// that a flag read back from a summary.json keeps its message.
func TestFlagText(t *testing.T) {
	flag := func(code string, args ...any) analyze.Flag { return analyze.Flag{Code: code, Args: args} }
	none := []int{0, 0, 0, 0, 0}
	tests := []struct {
		name string
		f    analyze.Flag
		want string
	}{
		{"interrupted", flag(analyze.FlagInterrupted, "signal: interrupt"), "trial was interrupted: signal: interrupt"},
		{"rate missed", flag(analyze.FlagRateMissed, 95.04, 100.0), "achieved 95.0 req/s, below 99% of the 100 req/s target"},
		{"errors, counted without examples", flag(analyze.FlagErrors, 1.5, []int{0, 2, 0, 0, 0}, []string{"", "", "", "", ""}), "1.50% of requests failed (2 timed out)"},
		{"errors refused", flag(analyze.FlagErrors, 5.0, []int{5, 0, 0, 0, 0}, []string{"dial tcp 127.0.0.1:1: connect: connection refused", "", "", "", ""}),
			"5.00% of requests failed (5 could not connect: dial tcp 127.0.0.1:1: connect: connection refused)"},
		{"errors of two causes, in their order", flag(analyze.FlagErrors, 8.0, []int{0, 0, 1, 0, 7}, []string{"", "", "HTTP 404 Not Found", "", "unexpected EOF"}),
			"8.00% of requests failed (1 answered 4xx: HTTP 404 Not Found; 7 failed otherwise: unexpected EOF)"},
		{"errors without causes", flag(analyze.FlagErrors, 0.5, none, nil), "0.50% of requests failed"},
		{"unsent", flag(analyze.FlagUnsent, 3, 300), "3 of 300 scheduled requests were never sent (load generator or connections saturated)"},
		{"short", flag(analyze.FlagShort, 4.0, 10.0), "measured window was 4.0s of the 10.0s planned"},
		{"saturated", flag(analyze.FlagSaturated, 3, 97.0), "CPU 3, which runs no measured service, was 97% busy: toll's load generator may have been starved, so rate and latency may be its own"},
		{"late", flag(analyze.FlagLateArrival, 900, 1800, 100, 0.0, []record.CPUHolder(nil)), "the load generator sent requests late: p99 900 µs (max 1800 µs) after their due time, above 100 µs (see Arrivals)"},
		{"late, held up", flag(analyze.FlagLateArrival, 900, 1800, 100, 12.5, []record.CPUHolder{{Name: "kdamond.0", PID: 77, Kernel: true, MS: 80}, {Name: "sshd", PID: 500, MS: 2},
			{Name: "a", PID: 1, MS: 1}, {Name: "b", PID: 2, MS: 1}}),
			"the load generator sent requests late: p99 900 µs (max 1800 µs) after their due time, above 100 µs; toll's threads waited 12.5 ms in all to run during the load; " +
				"on the load CPUs meanwhile ran kdamond.0 (pid 77, a kernel thread) 80 ms, sshd (pid 500) 2 ms, a (pid 1) 1 ms, 1 more (see Arrivals)"},
		{"steal", flag(analyze.FlagSteal, 4.25), "the hypervisor took 4.2% of the CPUs' time (steal): the machine was shared"},
		{"profile, no file", flag(analyze.FlagProfile, []string{"svc", "db"}, "", false, "perf: exit status 255"),
			"the profile of svc, db failed (the profiler), so its round is left out of where the CPU goes: perf: exit status 255"},
		{"profile, stacks kept", flag(analyze.FlagProfile, []string{"svc"}, "async-profiler", true, "boom"),
			"the profile of svc failed (async-profiler), so where the CPU goes lacks those stacks in its round: boom"},
		{"scrape", flag(analyze.FlagScrape, "app", "connection refused"), "app: its metrics could not be scraped, so the trial lacks their rows: connection refused"},
		{"nmt", flag(analyze.FlagNMT, "app", "jcmd: not found"), "app: no Native Memory Tracking summary, so the trial lacks JVM committed and off-heap: jcmd: not found"},
		{"throttled", flag(analyze.FlagThrottled, "app", 12), "app was throttled 12 times by its CPU limit"},
		{"no telemetry", flag(analyze.FlagNoTelemetry), "variant is configured to export telemetry but toll's sink received none over the trial's cycle"},
		{"exports rejected", flag(analyze.FlagExportsRejected, 2.5, 10.25),
			"variant is configured to export telemetry but toll's sink rejected all of it (2.50 requests/s, 10.2 KiB/s): see the sink's limits and the agent's log"},
		{"latency unreadable", flag(analyze.FlagLatencyUnreadable, "histogram: corrupt"), "latency left out: histogram: corrupt"},
		{"job failed", flag(analyze.FlagFailed, true, "exit status 1"), "job failed: exit status 1"},
		{"start failed", flag(analyze.FlagFailed, false, "not ready"), "start failed: not ready"},
		{"read back", analyze.Flag{Code: analyze.FlagSteal, Message: "as written"}, "as written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FlagText(tt.f); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
