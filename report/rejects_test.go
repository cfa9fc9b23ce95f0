package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestMarkdownShowsRejects checks that report.md has a row for the exports
// a variant's sink rejected, and the flag of a variant whose every export
// was rejected, saying what was refused and that its trials were left
// out of the comparison.
func TestMarkdownShowsRejects(t *testing.T) {
	m := &record.Manifest{Scenario: "s", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 2,
		Restart: "once", Mode: "sequential", Started: time.Unix(0, 0)}
	var trials []*record.Trial
	for r := 1; r <= 2; r++ {
		for i, v := range []string{"baseline", "otel"} {
			start := time.Unix(100, 0)
			tr := &record.Trial{Index: 2*r - 1 + i, Round: r, Variant: v, TargetRate: 10, PlannedS: 2,
				Start: start, MeasureStart: start, MeasureEnd: start.Add(2 * time.Second), Exports: v == "otel",
				Services: []record.ServiceRun{{Name: "svc", Measured: true}}}
			tr.Samples = []record.ServiceSeries{{Service: "svc", Points: []record.Sample{{T: 0, CPU: 1, RSS: 1 << 20}, {T: 2, CPU: 1.02, RSS: 1 << 20}}}}
			for s := range 3 {
				tel := record.Telemetry{T: float64(s)}
				if v == "otel" { // every export refused: 3 a second of 2 KiB
					k := uint64(2*(r-1) + s)
					tel.Requests, tel.Rejected = 3*k, 3*k
					tel.Bytes, tel.RejectedBytes = 6144*k, 6144*k
				}
				tr.Telemetry = append(tr.Telemetry, tel)
			}
			for s := range 2 {
				tr.Intervals = append(tr.Intervals, record.Interval{T: float64(s), Scheduled: 10, Sent: 10, Completed: 10, OK: 10})
			}
			trials = append(trials, tr)
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, s); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"exports rejected (/s)", "telemetry rejected (KiB/s)", analyze.FlagExportsRejected} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	// Every export of otel was refused: its trials are left out of the
	// comparison, and the flag gives what was refused.
	for _, line := range strings.Split(md, "\n") {
		if strings.Contains(line, "telemetry received") && strings.Contains(line, "6.0") {
			t.Errorf("telemetry received counts rejected bytes: %s", line)
		}
		if strings.HasPrefix(line, "- ✗ "+analyze.FlagExportsRejected) && (!strings.Contains(line, "3.00 requests/s, 6.0 KiB/s") || !strings.Contains(line, "left out of the comparison")) {
			t.Errorf("the flag does not say what was refused, and that its trials were left out: %s", line)
		}
	}
}
