package report

import (
	"bytes"
	"encoding/csv"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// seriesSummary is a run of 2 rounds of 4-second trials with two measured
// services, summarised with a table every 2 s.
func seriesSummary(t *testing.T) *analyze.Summary {
	t.Helper()
	m := &record.Manifest{Scenario: "s", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 2,
		Restart: "once", Mode: "sequential", Started: time.Unix(0, 0)}
	var trials []*record.Trial
	for r := 1; r <= 2; r++ {
		for i, v := range []string{"baseline", "otel"} {
			start := time.Unix(100, 0)
			tr := &record.Trial{Index: 2*r - 1 + i, Round: r, Variant: v, TargetRate: 10, PlannedS: 4,
				MeasureStart: start, MeasureEnd: start.Add(4 * time.Second),
				Services: []record.ServiceRun{{Name: "app", Measured: true}, {Name: "agent", Role: "agent", Measured: true}}}
			cores := 0.1 * float64(1+i) // otel's app uses twice the CPU
			for _, svc := range []string{"app", "agent"} {
				ss := record.ServiceSeries{Service: svc}
				for s := 0; s <= 4; s++ {
					p := record.Sample{T: float64(s), CPU: cores * float64(s), RSS: 10 << 20}
					if svc == "app" {
						p.JVM = &record.JVMSample{HeapUsed: 32 << 20}
					}
					ss.Points = append(ss.Points, p)
				}
				tr.Samples = append(tr.Samples, ss)
			}
			for s := 0; s < 4; s++ {
				tr.Intervals = append(tr.Intervals, record.Interval{T: float64(s), Scheduled: 10, Sent: 10, Completed: 10, OK: 10})
			}
			trials = append(trials, tr)
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{SeriesEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSeriesCSV(t *testing.T) {
	var b bytes.Buffer
	if err := SeriesCSV(&b, seriesSummary(t)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Join(rows[0], ",")
	if !strings.HasSuffix(header, "t_s,throughput_rps,errors,latency_p50_ms,latency_p99_ms,machine_cpu_pct,app_cpu_cores,app_rss_mib,app_heap_mib,agent_cpu_cores,agent_rss_mib,agent_heap_mib") {
		t.Fatalf("header %s", header)
	}
	if len(rows) != 1+4*4 {
		t.Fatalf("%d rows, want a header and 4 seconds of 4 trials", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		want := "0.1"
		if r[col["variant"]] == "otel" {
			want = "0.2"
		}
		if r[col["app_cpu_cores"]] != want || r[col["throughput_rps"]] != "10" || r[col["app_heap_mib"]] != "32" || r[col["agent_heap_mib"]] != "" {
			t.Errorf("row %v: want app at %s cores, 10 req/s, a heap for the app and none for the agent", r, want)
		}
	}
}

func TestBinnedTable(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, seriesSummary(t)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	// Every renderer of tables shows it, and from a summary read back
	// from JSON the same.
	for name, render := range map[string]func(io.Writer, *analyze.Summary) error{"text": Text, "html": HTML} {
		var out bytes.Buffer
		if err := render(&out, seriesSummary(t)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "every 2 s (median over trials)") {
			t.Errorf("%s lacks the every-2-s table", name)
		}
	}
	js, err := JSON(seriesSummary(t))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummary(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := Markdown(&again, back); err != nil {
		t.Fatal(err)
	}
	if again.String() != md {
		t.Errorf("report.md from summary.json differs:\n%s\nvs\n%s", again.String(), md)
	}
	for _, want := range []string{"## at 10 req/s, every 2 s (median over trials)",
		"| seconds | baseline: CPU (cores) | baseline: CPU quartiles | baseline: throughput (req/s) | otel: CPU (cores) |",
		"| 0–2 | 0.200 | [0.200, 0.200] | 10.0 | 0.400 |", "| 2–4 | 0.200 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}
