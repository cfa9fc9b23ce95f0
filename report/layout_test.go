package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// layoutFixture is a run at two load steps (100 and 200 req/s), 4 rounds of
// a baseline and an otel variant that costs 20% more CPU per request and
// answers 10% slower, with an agent service beside the application.
func layoutFixture(t *testing.T, layout string) *analyze.Summary {
	t.Helper()
	m := &record.Manifest{Scenario: "repro", Baseline: "baseline", Variants: []string{"baseline", "otel"},
		Rounds: 4, Mode: "sequential", Seed: 1, ReportLayout: layout,
		Load: record.LoadSettings{Model: "open", Rates: []float64{100, 200}, WarmupS: 3, DurationS: 12}}
	noise := []float64{1.0, 1.03, 0.97, 1.01}
	var trials []*record.Trial
	idx := 0
	for step, rate := range []float64{100, 200} {
		for r := 1; r <= 4; r++ {
			for _, v := range []struct {
				name string
				cpu  float64
				lat  int64
			}{{"baseline", 0.001, 1000}, {"otel", 0.0012, 1100}} {
				idx++
				tr := htmlTrial(t, idx, r, v.name, 12, rate, v.cpu*noise[r-1], v.lat, true)
				tr.Step = step
				trials = append(trials, tr)
			}
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLayouts checks each published benchmark's shape: the rows and
// columns it published, and toll's interval in its cells.
func TestLayouts(t *testing.T) {
	tests := []struct {
		layout string
		check  func(t *testing.T, v *View)
	}{
		{scenario.LayoutSermant, func(t *testing.T, v *View) {
			tb := v.Tables[0]
			if len(tb.Rows) != 2 || tb.Rows[0][0].Text != "100 req/s" || tb.Rows[1][0].Text != "200 req/s" {
				t.Fatalf("want a row per load step, got %v", tb.Rows)
			}
			// CPU: baseline / variant / Δ with the change's interval.
			if c := tb.Rows[0][1]; strings.Count(c.Text, " / ") != 2 || !strings.Contains(c.Text, "±") || c.Verdict != VerdictUp {
				t.Errorf("CPU cell %q (verdict %s), want b / v / Δ (Δ%% ± half-width), up", c.Text, c.Verdict)
			}
		}},
		{scenario.LayoutKindling, func(t *testing.T, v *View) {
			tb := v.Tables[0]
			if len(tb.Header) != 1+3*2 || tb.Header[1] != "100 req/s: baseline" || tb.Header[6] != "200 req/s: Δ" {
				t.Fatalf("want the two load steps side by side, got %v", tb.Header)
			}
			var agent bool
			for _, r := range tb.Rows {
				agent = agent || strings.HasPrefix(r[0].Text, "agent agent cpu")
			}
			if !agent {
				t.Errorf("no row of the agent's own CPU: %v", tb.Rows)
			}
			// The application's memory is its own, not the variant's
			// total with the agent's 30 MiB.
			for _, r := range tb.Rows {
				if r[0].Text == "application-memory (RSS, MiB)" {
					if v := r[2].Value; v == nil || *v < 200 || *v > 220 {
						t.Errorf("application memory %q, want the app's own 200-220 MiB", r[2].Text)
					}
				}
			}
		}},
		{scenario.LayoutJetty, func(t *testing.T, v *View) {
			var cpu *Table
			for i := range v.Tables {
				if strings.HasPrefix(v.Tables[i].Title, "CPU every 5 s") {
					cpu = &v.Tables[i]
				}
			}
			if cpu == nil || len(cpu.Rows) != 2 || len(cpu.Header) < 3 {
				t.Fatalf("want CPU every 5 s, a row per variant, columns of 5 s: %+v", v.Tables)
			}
			if !strings.Contains(v.Tables[0].Rows[0][1].Text, " → ") {
				t.Errorf("latency row %v, want from → to", Texts(v.Tables[0].Rows[0]))
			}
		}},
		{scenario.LayoutSkyWalkingGo, func(t *testing.T, v *View) {
			if len(v.Paragraphs) != 6 || !strings.Contains(v.Paragraphs[2], "average response time by +") || !strings.Contains(v.Paragraphs[2], "±") {
				t.Errorf("want three sentences per step, the change with its interval: %q", v.Paragraphs)
			}
		}},
		{scenario.LayoutEaseAgent, func(t *testing.T, v *View) {
			var rows []string
			for _, r := range v.Tables[0].Rows {
				rows = append(rows, r[0].Text)
			}
			for _, want := range []string{"http_req_duration avg (ms)", "http_req_duration min (ms)", "http_req_duration p(95) (ms)", "http_reqs (/s)", "process CPU (cores)"} {
				if !strings.Contains(strings.Join(rows, "\n"), want) {
					t.Errorf("no row %q in %q", want, rows)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.layout, func(t *testing.T) {
			s := layoutFixture(t, tt.layout)
			v, err := Layout(s, tt.layout)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, v)
			// report.md ends with the layout the scenario names.
			var md bytes.Buffer
			if err := Markdown(&md, s); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md.String(), "\n## "+v.Title+"\n") {
				t.Errorf("report.md lacks the layout %q", v.Title)
			}
		})
	}
	if _, err := Layout(layoutFixture(t, ""), "vendor"); err == nil || !strings.Contains(err.Error(), "sermant, kindling") {
		t.Errorf("an unknown layout: %v", err)
	}
}
