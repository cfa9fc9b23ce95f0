package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

func f(x float64) *float64 { return &x }

func TestDeltaPct(t *testing.T) {
	cpu, spans := analyze.Info(analyze.CPUPerRequest), analyze.Info(analyze.Spans)
	tests := []struct {
		name string
		info analyze.CostInfo
		d    analyze.Delta
		want string
	}{
		{"significant", cpu, analyze.Delta{N: 5, Pct: f(3.14), CILow: f(2.3), CIHigh: f(3.9), Significant: true}, "+3.1% [+2.3%, +3.9%]"},
		{"asymmetric", cpu, analyze.Delta{N: 5, Pct: f(27.3), CILow: f(0.8), CIHigh: f(60.6), Significant: true}, "+27.3% [+0.8%, +60.6%]"},
		{"excludes 0 by less than the rounding", cpu, analyze.Delta{N: 5, Pct: f(2), CILow: f(0.004), CIHigh: f(4.1), Significant: true}, "+2.0% [+0.004%, +4.1%]"},
		{"not significant", cpu, analyze.Delta{N: 5, Pct: f(0.4), CILow: f(-0.8), CIHigh: f(1.6)}, "~ +0.4% [-0.8%, +1.6%]"},
		{"from a baseline of 0", spans, analyze.Delta{N: 5, Abs: 1200, CILow: f(1199.99), CIHigh: f(1200.01), Significant: true, FromZero: true}, "n/a (baseline 0)"},
		{"one round", cpu, analyze.Delta{N: 1, Pct: f(12)}, "+12.0% (no CI, n=1)"},
		{"additive", spans, analyze.Delta{N: 5, Abs: 1200, CILow: f(1190), CIHigh: f(1210), Significant: true}, "± 10.0"},
		{"additive zero", spans, analyze.Delta{N: 5, CILow: f(0), CIHigh: f(0)}, "~ (± 0.0)"},
		{"significant once corrected", cpu, analyze.Delta{N: 5, Pct: f(3.14), CILow: f(2.3), CIHigh: f(3.9), PValue: f(0.001), Significant: true, SignificantCorrected: true}, "+3.1% [+2.3%, +3.9%]"},
		{"significant, not once corrected", cpu, analyze.Delta{N: 5, Pct: f(3.14), CILow: f(0.3), CIHigh: f(6.1), PValue: f(0.04), Significant: true}, "+3.1% [+0.3%, +6.1%] †"},
		{"additive, not once corrected", spans, analyze.Delta{N: 5, Abs: 1200, CILow: f(10), CIHigh: f(2390), PValue: f(0.04), Significant: true}, "± 1190.0 †"},
		{"not significant, not corrected", cpu, analyze.Delta{N: 5, Pct: f(0.4), CILow: f(-0.8), CIHigh: f(1.6), PValue: f(0.5)}, "~ +0.4% [-0.8%, +1.6%]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.d.Settle()
			if got := DeltaPct(tt.info, &tt.d); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// summary builds a small analysed run: baseline and one variant, 3 rounds.
func summary(t testing.TB) *analyze.Summary {
	t.Helper()
	return summaryWithLoad(t, record.LoadSettings{})
}

// summaryWithLoad is summary with the manifest's load settings.
func summaryWithLoad(t testing.TB, load record.LoadSettings) *analyze.Summary {
	t.Helper()
	m := &record.Manifest{Scenario: "s<x>", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 3,
		Restart: "once", Mode: "sequential", Started: time.Unix(0, 0), Load: load}
	var trials []*record.Trial
	for r := 1; r <= 3; r++ {
		for i, v := range []string{"baseline", "otel"} {
			start := time.Unix(100, 0)
			tr := &record.Trial{Index: 2*r - 1 + i, Round: r, Variant: v, TargetRate: 10, PlannedS: 2,
				MeasureStart: start, MeasureEnd: start.Add(2 * time.Second),
				Services: []record.ServiceRun{{Name: "svc", Measured: true}}}
			per := 0.001 * (1 + 0.1*float64(i)) * (1 + 0.01*float64(r))
			tr.Samples = []record.ServiceSeries{{Service: "svc", Points: []record.Sample{{T: 0, CPU: 1, RSS: 1 << 20}, {T: 2, CPU: 1 + 20*per, RSS: 1 << 20}}}}
			for s := 0; s < 2; s++ {
				tr.Intervals = append(tr.Intervals, record.Interval{T: float64(s), Scheduled: 10, Sent: 10, Completed: 10, OK: 10})
			}
			trials = append(trials, tr)
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTableShape(t *testing.T) {
	tabs := Tables(summary(t))
	if len(tabs) != 1 {
		t.Fatalf("%d tables", len(tabs))
	}
	tab := tabs[0]
	if got := strings.Join(tab.Header, "|"); got != "cost|baseline (n=3)|otel (n=3)|Δ|Δ%" {
		t.Errorf("header %q", got)
	}
	for _, r := range tab.Rows {
		if len(r) != len(tab.Header) {
			t.Errorf("row %v has %d cells", r, len(r))
		}
		if r[0].Text == "CPU per request (ms)" && !strings.HasPrefix(r[4].Text, "+10.0% [") {
			t.Errorf("CPU per request Δ%% %q, want +10.0%% [low, high]", r[4].Text)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, summary(t)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if strings.Contains(md, "s<x>") || !strings.Contains(md, "s&lt;x&gt;") {
		t.Errorf("scenario name not escaped:\n%s", md)
	}
	if !strings.Contains(md, "| cost | baseline (n=3) | otel (n=3) | Δ | Δ% |") {
		t.Errorf("no table header:\n%s", md)
	}
}

func TestCSV(t *testing.T) {
	var b bytes.Buffer
	if err := CSV(&b, summary(t)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "scenario,step,target_rate,target_users,round,trial,variant,cost,unit,value,flagged" {
		t.Errorf("header %v", rows[0])
	}
	n := 0
	for _, r := range rows[1:] {
		if r[7] == string(analyze.CPUPerRequest) {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d CPU-per-request rows, want one per trial (6)", n)
	}
}

// TestDeltaAbs checks that a change in milliseconds carries its interval
// and one in another unit does not.
func TestDeltaAbs(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	d := &analyze.Delta{N: 5, Abs: 0.412, AbsCILow: f(0.292), AbsCIHigh: f(0.532)}
	d.Settle()
	if got, want := DeltaAbs(analyze.Info(analyze.LatencyP50), d), "+0.41 ± 0.12"; got != want {
		t.Errorf("latency: %q, want %q", got, want)
	}
	if got := DeltaAbs(analyze.Info(analyze.RSS), &analyze.Delta{N: 5, Abs: 3, AbsCILow: f(2), AbsCIHigh: f(4)}); strings.Contains(got, "±") {
		t.Errorf("RSS: %q has an interval", got)
	}
	if got := DeltaAbs(analyze.Info(analyze.LatencyP50), &analyze.Delta{N: 1, Abs: 0.4}); strings.Contains(got, "±") {
		t.Errorf("one round: %q has an interval", got)
	}
}

// TestDotPlotEveryRepetition checks that a start-up or job experiment's HTML
// report plots every repetition of each variant, and a load test's none.
func TestDotPlotEveryRepetition(t *testing.T) {
	st := analyze.Step{Workload: "job", Variants: []analyze.VariantResult{
		{Name: "baseline", Costs: []analyze.CostResult{{Cost: analyze.JobWall, Label: "job: wall time", Values: []float64{1, 1.1, 0.9}, Value: 1}}},
		{Name: "otel", Costs: []analyze.CostResult{{Cost: analyze.JobWall, Label: "job: wall time", Values: []float64{1.2, 1.3}, Value: 1.25}}},
	}}
	plots := stepDotPlots(st, map[string]string{"baseline": "#000", "otel": "#f00"})
	if len(plots) != 1 {
		t.Fatalf("%d plots, want 1", len(plots))
	}
	if n := strings.Count(string(plots[0]), "<circle"); n != 5 {
		t.Errorf("%d dots, want one per repetition (5)", n)
	}
	st.Workload = ""
	if len(stepDotPlots(st, nil)) != 0 {
		t.Error("a load test's step got a dot plot")
	}
}

// TestOpenMetricsStartupSteps checks that two start-up steps, which differ
// by their CPU limit only, give distinct series.
func TestOpenMetricsStartupSteps(t *testing.T) {
	s := &analyze.Summary{Scenario: "s", Baseline: "baseline", Manifest: &record.Manifest{}}
	for _, limit := range []float64{1, 2} {
		s.Steps = append(s.Steps, analyze.Step{Workload: "startup", CPULimit: limit, Variants: []analyze.VariantResult{
			{Name: "baseline", Costs: []analyze.CostResult{{Cost: analyze.StartupReady, Unit: "s", Value: 4 / limit}}}}})
	}
	var b strings.Builder
	if err := OpenMetrics(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`cpu_limit="1"`, `cpu_limit="2"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no series with %s:\n%s", want, b.String())
		}
	}
}

// TestRowsAgreeWithColumns checks that a row's Δ agrees with the values
// beside it (6.4 → 6.6 threads does not read 6 → 7 with Δ 0), and that a
// cost whose baseline is 0 (spans) shows its change in the cost's unit,
// with no ratio and no colour of one, in a step's table and in the table
// of all steps.
func TestRowsAgreeWithColumns(t *testing.T) {
	s := summary(t)
	f := func(x float64) *float64 { return &x }
	threads := analyze.Delta{N: 3, Abs: 0.2, Pct: f(3.1), CILow: f(-20), CIHigh: f(30), CIUnit: "%", Size: analyze.SizeNone}
	spans := analyze.Delta{N: 3, Abs: 1200, CILow: f(1199.99), CIHigh: f(1200.01), CIUnit: "/s", Significant: true,
		FromZero: true, Size: analyze.SizeNone}
	set := func(v *analyze.VariantResult, cr analyze.CostResult) {
		for i := range v.Costs {
			if v.Costs[i].Cost == cr.Cost {
				v.Costs[i] = cr
				return
			}
		}
		v.Costs = append(v.Costs, cr)
	}
	for i := range s.Steps[0].Variants {
		v := &s.Steps[0].Variants[i]
		if v.Name == s.Baseline {
			set(v, analyze.CostResult{Cost: analyze.Threads, Value: 6.4})
			set(v, analyze.CostResult{Cost: analyze.Spans, Value: 0})
			continue
		}
		set(v, analyze.CostResult{Cost: analyze.Threads, Value: 6.6, Delta: &threads})
		set(v, analyze.CostResult{Cost: analyze.Spans, Value: 1200, Delta: &spans})
	}
	two := *s
	st2 := s.Steps[0]
	st2.Index, st2.Rate = 1, st2.Rate*2
	two.Steps = append(append([]analyze.Step{}, s.Steps...), st2)
	tabs := Tables(&two)
	row := func(tab Table, label string) []Cell {
		for _, r := range tab.Rows {
			if strings.HasPrefix(r[0].Text, label) {
				return r
			}
		}
		t.Fatalf("table %q has no row %q", tab.Title, label)
		return nil
	}
	th := row(tabs[0], "threads")
	if got := strings.Join(Texts(th[1:4]), " | "); got != "6.4 | 6.6 | +0.2" {
		t.Errorf("threads row reads %q, want the values to the digit at which the Δ agrees: 6.4 | 6.6 | +0.2", got)
	}
	sp := row(tabs[0], "spans received")
	if sp[3].Text != "+1200.0" || sp[4].Text != "n/a (baseline 0)" || sp[4].Size != analyze.SizeNone || sp[4].Verdict == VerdictUp {
		t.Errorf("spans row: Δ %q, Δ%% %q (verdict %s, size %s); want +1200.0 and no ratio, uncoloured", sp[3].Text, sp[4].Text, sp[4].Verdict, sp[4].Size)
	}
	if c := htmlCellOf(sp[4]); strings.Contains(c.Class, "up") || strings.Contains(c.Text, "±") {
		t.Errorf("spans' Δ%% in the page: %+v, want no colour of a ratio", c)
	}
	all := row(tabs[len(tabs)-1], "spans received")
	for _, c := range all[1:] {
		if c.Kind == KindNone || c.Text == "" {
			t.Errorf("table of all steps: spans row %q has an empty cell", Texts(all))
		}
	}
	if all[2].Text != "+1200.0" {
		t.Errorf("table of all steps: spans change %q, want +1200.0", all[2].Text)
	}
}

// TestBrief checks that toll run -q prints the headlines and the tables
// only: no flags, warnings, notes or environment, each table's rows once.
func TestBrief(t *testing.T) {
	s := summaryWithLoad(t, record.LoadSettings{Model: "open", Arrival: "uniform"})
	worst := 964.0
	s.FlagGroups = []analyze.FlagGroup{{Code: analyze.FlagLateArrival, Trials: []int{1, 2}, Of: 6, Worst: &worst}}
	s.Warnings = append(s.Warnings, analyze.Warning{Code: analyze.WarnNote, Text: "a warning"})
	var b bytes.Buffer
	if err := Brief(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"late-arrivals", "a warning", "Host", "Δ% is the change", "Arrivals"} {
		if strings.Contains(out, bad) {
			t.Errorf("brief output holds %q:\n%s", bad, out)
		}
	}
	want := len(s.Headlines)
	for _, tab := range Tables(s) {
		want += 4 + len(tab.Rows) // a blank line, the title, the header and its rule
	}
	if outcome(s) != "" {
		want += 2 // a partial run says so, after a blank line
	}
	if got := strings.Count(out, "\n"); got != want || !strings.Contains(out, "otel: ") {
		t.Errorf("brief output has %d lines, want %d (the headlines and the tables):\n%s", got, want, out)
	}
}
