package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestWarmupsShown checks that every report says, in one line, how the
// variant warm-ups until the JIT settled went, and that the summary warns
// of one that reached its maximum unsettled.
func TestWarmupsShown(t *testing.T) {
	m := &record.Manifest{Scenario: "jit", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 3,
		Load: record.LoadSettings{Model: "open", Rates: []float64{100}, DurationS: 6, VariantWarmupS: 120,
			VariantWarmupUntil: &record.WarmupUntil{JITBelowMs: 5, OverS: 10}}}
	var trials []*record.Trial
	for r := 1; r <= 3; r++ {
		for i, v := range []string{"baseline", "otel"} {
			tr := htmlTrial(t, 2*r+i, r, v, 6, 100, 0.001*(1+0.2*float64(i)), 1000, false)
			tr.VariantWarmupS = 30 + 10*float64(r)
			tr.VariantWarmup = &record.VariantWarmup{MaxS: 120, Settled: true, JITMsPerS: map[string]float64{"app": 1}}
			if v == "baseline" && r == 2 {
				tr.VariantWarmup.CostSteady = true // ended on its steady CPU per request
			}
			if v == "otel" && r == 3 {
				tr.VariantWarmupS = 120
				tr.VariantWarmup = &record.VariantWarmup{MaxS: 120, JITMsPerS: map[string]float64{"app": 23.4}}
			}
			trials = append(trials, tr)
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	line := "variant warm-ups until the JIT settles (below 5 ms/s over 10 s, at most 2m0s): baseline 40–60 s, 3 of 3 settled (1 on a steady CPU per request before the JIT settled); otel 40–120 s, 2 of 3 settled"
	var text, md, page bytes.Buffer
	for _, err := range []error{Text(&text, s), Markdown(&md, s), HTML(&page, s)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": page.String()} {
		if !strings.Contains(out, line) {
			t.Errorf("%s report lacks %q:\n%s", name, line, out)
		}
	}
	if !strings.Contains(text.String(), "otel's variant warm-up before trial 7 (round 3) reached its maximum of 120 s without its JIT settling") ||
		!strings.Contains(text.String(), "app 23.4 ms/s") {
		t.Errorf("text report lacks the warning of otel's unsettled warm-up:\n%s", text.String())
	}
}

// TestWarmupsLineFresh checks that a run in precision mode that starts
// its services afresh every round says why toll warmed nothing, and that
// a fixed design does not.
func TestWarmupsLineFresh(t *testing.T) {
	for _, tt := range []struct {
		name string
		m    record.Manifest
		want string
	}{
		{"precision, per-round", record.Manifest{Restart: "per-round", Precision: &record.Precision{}}, "no variant warm-up: the scenario starts its services afresh every round (restart: per-round)"},
		{"precision, per-trial", record.Manifest{Restart: "per-trial", Precision: &record.Precision{}}, "every trial (restart: per-trial)"},
		{"fixed design, per-round", record.Manifest{Restart: "per-round"}, ""},
		{"precision, once", record.Manifest{Restart: "once", Precision: &record.Precision{}}, ""},
	} {
		got := warmupsLine(&analyze.Summary{Manifest: &tt.m})
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestWarmupsLineChosen checks that the warm-up toll chose for a JVM says
// its phases: the users, four times each trial's rate under an open-model
// load, then each trial's own load; under a closed-model load, no rate.
func TestWarmupsLineChosen(t *testing.T) {
	for _, tt := range []struct {
		name string
		u    record.WarmupUntil
		want string
	}{
		{"open model", record.WarmupUntil{JITBelowMs: 5, OverS: 10, Auto: true, NoJVMS: 10, JVMUsers: 16, JVMRateTimes: 4},
			"a JVM by 16 users, then at 4 times each trial's rate (at most 16 requests in flight), then at each trial's load, each until its JIT settles (below 5 ms/s over 10 s, at most 5m0s in all)"},
		{"closed model", record.WarmupUntil{JITBelowMs: 5, OverS: 10, Auto: true, NoJVMS: 10, JVMUsers: 16},
			"a JVM by 16 users, then at each trial's load, each until its JIT settles (below 5 ms/s over 10 s, at most 5m0s in all)"},
	} {
		u := tt.u
		s := &analyze.Summary{
			Manifest: &record.Manifest{Restart: "once", Precision: &record.Precision{}, Load: record.LoadSettings{VariantWarmupS: 300, VariantWarmupUntil: &u}},
			Warmups:  []analyze.Warmup{{Variant: "otel", ShortestS: 117, LongestS: 194, Count: 3, Settled: 3}},
		}
		if got := warmupsLine(s); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want it to hold %q", tt.name, got, tt.want)
		}
	}
}

// TestVariantWarmup checks how a report's first line says the variants
// were warmed.
func TestVariantWarmup(t *testing.T) {
	until := &record.WarmupUntil{}
	tests := []struct {
		name string
		load record.LoadSettings
		cpus string
		want string
	}{
		{"none", record.LoadSettings{}, "", ""},
		{"at a rate", record.LoadSettings{VariantWarmupS: 90, VariantWarmupRate: 200}, "", ", variant warm-up 1m30s at 200 req/s"},
		{"one user", record.LoadSettings{VariantWarmupS: 60, VariantWarmupUsers: 1}, "", ", variant warm-up 1m0s by 1 user"},
		{"until settled", record.LoadSettings{VariantWarmupS: 120, VariantWarmupUntil: until}, "",
			", variant warm-up until the JIT settles, at most 2m0s"},
		{"users on every CPU until settled", record.LoadSettings{VariantWarmupS: 120, VariantWarmupUsers: 2, VariantWarmupUntil: until}, "0-1",
			", variant warm-up by 2 users on CPUs 0-1, then at each trial's load, each until the JIT settles, at most 2m0s each"},
		{"users then a rate, until settled", record.LoadSettings{VariantWarmupS: 120, VariantWarmupUsers: 2, VariantWarmupRate: 600, VariantWarmupUntil: until}, "0-1",
			", variant warm-up by 2 users on CPUs 0-1, then at 600 req/s, then at each trial's load, each until the JIT settles, at most 2m0s each"},
		{"chosen by toll, on every CPU", record.LoadSettings{VariantWarmupS: 300, VariantWarmupUsers: 0, VariantWarmupUntil: &record.WarmupUntil{Auto: true, JVMUsers: 2}}, "0-1",
			", variant warm-ups chosen by toll on CPUs 0-1"},
	}
	for _, tt := range tests {
		m := &record.Manifest{Load: tt.load}
		m.Layout.WarmupCPUs = tt.cpus
		if got := variantWarmup(m); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
