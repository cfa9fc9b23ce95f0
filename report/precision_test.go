package report

import (
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestPrecisionLines checks the one line a run in precision mode ends
// with, for a target reached (each target named when there are several)
// and for a budget spent, and that a run with fixed rounds has none.
func TestPrecisionLines(t *testing.T) {
	tests := []struct {
		st      record.PrecisionStep
		targets map[string]float64
		want    string
	}{
		{record.PrecisionStep{Stop: "reached", Rounds: 14, Starts: 3, ElapsedS: 660, TargetPct: 3, HalfPct: 2.8, Variant: "otel", Cost: "cpu_per_request_ms"}, nil,
			"reached ±3% after 14 rounds over 3 starts, 11 min"},
		{record.PrecisionStep{Stop: "reached", Rounds: 11, ElapsedS: 300, TargetPct: 10, HalfPct: 9.9, Variant: "otel", Cost: "latency_mean_ms"},
			map[string]float64{"latency_mean_ms": 10, "cpu_per_request_ms": 3},
			"reached ±3% on CPU per request and ±10% on latency mean after 11 rounds, 5 min"},
		{record.PrecisionStep{Stop: "budget", Rounds: 30, Starts: 4, ElapsedS: 1500, TargetPct: 3, HalfPct: 4.2, Variant: "otel", Cost: "cpu_per_request_ms", MoreStarts: 2, MoreS: 480}, nil,
			"budget spent after 30 rounds over 4 starts, 25 min: otel CPU per request at ±4.2%; about 2 more starts (≈ 8 min) would reach ±3%"},
		{record.PrecisionStep{Stop: "idle", Rounds: 5, Starts: 2, ElapsedS: 50}, nil,
			"5 rounds over 2 starts, 50 s: no request for a per-request target to aim at; the minimum rounds measured what the variants cost without load"},
		{record.PrecisionStep{Stop: "budget", Rounds: 12, Starts: 2, ElapsedS: 600, TargetPct: 3, HalfPct: 5.1, StartHalfPct: 4.4, Variant: "agent", Cost: "cpu_per_request_ms", MoreRounds: -1}, nil,
			"budget spent after 12 rounds over 2 starts, 10 min: agent CPU per request at ±5.1%, of which ±4.4% is what differs between starts (only more starts narrow it); ±3% is out of reach at this spread (more than 10 times the budget)"},
		{record.PrecisionStep{Stop: "budget", Rounds: 126, Starts: 2, ElapsedS: 1410, TargetPct: 3, HalfPct: 4.1, Variant: "datadog", Cost: "cpu_per_request_ms", MoreRounds: -1,
			Held: []record.TargetHeld{{Cost: "cpu_per_request_nojit_ms", Round: 52, ElapsedS: 560}}},
			map[string]float64{"cpu_per_request_ms": 3, "cpu_per_request_nojit_ms": 3},
			"budget spent after 126 rounds over 2 starts, 24 min: datadog CPU per request at ±4.1%; ±3% is out of reach at this spread (more than 10 times the budget); ±3% on CPU per request without JIT met from round 52 (9 min) on"},
		{record.PrecisionStep{Stop: "reached", Rounds: 40, Starts: 3, ElapsedS: 720, TargetPct: 3, HalfPct: 2.9, Variant: "otel", Cost: "cpu_per_request_ms", TakenUp: true}, nil,
			"reached ±3% after 40 rounds over 3 starts, 12 min (taken up again once the other load steps had run, with what they left of the budget)"},
		{record.PrecisionStep{Stop: "budget", Rounds: 4, Starts: 1, ElapsedS: 170, TargetPct: 3, HalfPct: 8.6, Variant: "extra", Cost: "cpu_per_request_ms", MoreStarts: 3, MoreS: 600}, nil,
			"budget spent after 4 rounds over 1 start, fewer than the 2 of precision.min_starts, 3 min: extra CPU per request at ±8.6%; about 3 more starts (≈ 10 min) would reach ±3%"},
	}
	for _, tt := range tests {
		s := &analyze.Summary{Manifest: &record.Manifest{Precision: &record.Precision{Targets: tt.targets, MinStarts: 2, Steps: []record.PrecisionStep{tt.st}}}}
		got := precisionLines(s)
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("lines %q, want %q", got, tt.want)
		}
	}
	s := &analyze.Summary{Manifest: &record.Manifest{Rounds: 10}}
	if got := precisionLines(s); len(got) != 0 {
		t.Errorf("a fixed run: %q", got)
	}
	var b strings.Builder
	s = &analyze.Summary{Scenario: "p", Baseline: "baseline", Manifest: &record.Manifest{Precision: &record.Precision{Steps: []record.PrecisionStep{tests[0].st}}}}
	if err := Text(&b, s); err != nil || !strings.Contains(b.String(), tests[0].want) {
		t.Errorf("terminal report lacks the line (%v):\n%s", err, b.String())
	}
}

// TestEquivalentCell checks that an equivalent change gets its own verdict
// and text, distinct from "~".
func TestEquivalentCell(t *testing.T) {
	pct, lo, hi := 0.2, -1.0, 1.4
	d := &analyze.Delta{Pct: &pct, CILow: &lo, CIHigh: &hi, CIUnit: "%"}
	d.Settle()
	info := analyze.Info(analyze.CPUPerRequest)
	if c := ChangeCell(info, d); c.Verdict != VerdictSame || !strings.HasPrefix(c.Text, "~") {
		t.Errorf("without a margin: %+v", c)
	}
	d.JudgeEquivalence(3)
	c := ChangeCell(info, d)
	if c.Verdict != VerdictEquivalent || c.Text != "= within ±3% (+0.2% [-1.0%, +1.4%])" {
		t.Errorf("within ±3%%: verdict %q text %q", c.Verdict, c.Text)
	}
}

// TestPrecisionLineInHTML checks that report.html states how a run in
// precision mode ended.
func TestPrecisionLineInHTML(t *testing.T) {
	st := record.PrecisionStep{Stop: "reached", Rounds: 14, Starts: 3, ElapsedS: 660, TargetPct: 3}
	s := &analyze.Summary{Scenario: "p", Baseline: "baseline", Manifest: &record.Manifest{Precision: &record.Precision{Steps: []record.PrecisionStep{st}}}}
	var b strings.Builder
	if err := HTML(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "reached ±3% after 14 rounds over 3 starts, 11 min") {
		t.Errorf("report.html lacks the precision line")
	}
}

// TestScheduleAndMeasuredLines checks that the report's first lines say
// what toll chose of the schedule and why, that a step that ceded its
// budget says so, and that a run in precision mode says how much of it
// was measured.
func TestScheduleAndMeasuredLines(t *testing.T) {
	m := &record.Manifest{Scenario: "p", Baseline: "baseline", Variants: []string{"baseline", "v"}, Mode: "duet", Restart: "per-round",
		Load:   record.LoadSettings{WarmupS: 2},
		Layout: record.Layout{DuetCPUs: []string{"1", "1"}},
		Chosen: &record.ScheduleChoice{Mode: true, ModeWhy: "duet", Restart: true, RestartWhy: "no-jvm", Warmup: true},
		Precision: &record.Precision{Targets: map[string]float64{"cpu_per_request_ms": 3}, Steps: []record.PrecisionStep{
			{Step: 0, Stop: "ceded", Rounds: 5, ElapsedS: 90, TargetPct: 3, HalfPct: 8.3, Variant: "v", Cost: "cpu_per_request_ms", MoreRounds: -1}}}}
	s := &analyze.Summary{Scenario: "p", Baseline: "baseline", Variants: m.Variants, Manifest: m, Measured: &analyze.Measured{WindowS: 414, ElapsedS: 600}}
	var b strings.Builder
	if err := Text(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"schedule chosen by toll: the baseline and each variant loaded at once on CPUs 1 (a shared duet)",
		"the services started afresh every round (restart: per-round): no service runs a JVM",
		"2s of load before each window",
		"stopped after 5 rounds, 2 min: v CPU per request at ±8.3%; ±3% is out of reach at this spread, so its share of the budget went to the other load steps",
		"measured 6.9 of 10.0 min (69%) in windows",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	m.Chosen = &record.ScheduleChoice{Mode: true, ModeWhy: "together"}
	if got := scheduleLine(m); !strings.Contains(got, "the baseline and every variant loaded at once on CPUs 1 (mode: together)") {
		t.Errorf("together: %q", got)
	}
	m.Chosen = &record.ScheduleChoice{Mode: true, ModeWhy: "together-busy", BusyPct: 99.6}
	if got := scheduleLine(m); !strings.Contains(got, "each variant loaded at once on CPUs 1 (a shared duet): every variant at once kept those CPUs 100% busy in one of the first rounds") ||
		!strings.Contains(got, "trials/aside/together") {
		t.Errorf("pairs after every variant at once: %q", got)
	}
	m.Chosen = &record.ScheduleChoice{Mode: true, ModeWhy: "busy", BusyPct: 97}
	if got := scheduleLine(m); !strings.Contains(got, "one variant at a time: sides loaded at once kept the services' CPUs 97% busy in one of the first rounds") {
		t.Errorf("one at a time after sides at once: %q", got)
	}
	m.Chosen = &record.ScheduleChoice{Mode: true, ModeWhy: "latency-primary"}
	if got := scheduleLine(m); !strings.Contains(got, "one variant at a time: a primary cost is a latency") {
		t.Errorf("one at a time: %q", got)
	}
	m.Chosen = &record.ScheduleChoice{Unchosen: "rounds"}
	if got := scheduleLine(m); !strings.HasPrefix(got, "schedule as the scenario's defaults give it, one variant at a time: the scenario fixes its rounds") {
		t.Errorf("fixed rounds: %q", got)
	}
	m.Chosen = nil
	if got := scheduleLine(m); got != "" {
		t.Errorf("nothing chosen: %q", got)
	}
}

// TestSettlingLine checks that a run that left a start's leading rounds
// out says which, by start, with the compilers' CPU over them and after,
// and that its measured line says how much of the windows counted.
func TestSettlingLine(t *testing.T) {
	m := &record.Manifest{Scenario: "p", Baseline: "baseline", Variants: []string{"baseline", "v"}, Restart: "once", Starts: 2,
		Precision: &record.Precision{Targets: map[string]float64{"cpu_per_request_ms": 3}}}
	s := &analyze.Summary{Scenario: "p", Baseline: "baseline", Variants: m.Variants, Manifest: m,
		Measured: &analyze.Measured{WindowS: 414, ElapsedS: 600, CountedS: 350},
		Steps:    []analyze.Step{{Index: 0, Rate: 50}},
		Settling: []analyze.Settling{
			{Step: 0, Variant: "baseline", Launch: 0, Rounds: []int{1, 2, 3, 4, 5}, Of: 40, JITBefore: 9.14, JITAfter: 0.8},
			{Step: 0, Variant: "v", Launch: 1, Rounds: []int{41, 42}, Of: 30, JITBefore: 31, JITAfter: 1.2},
			{Step: 0, Variant: "baseline", Pair: "v", Launch: 1, Rounds: []int{41}, Of: 30, JITBefore: 12, JITAfter: 1},
			{Step: 0, Variant: "v", Launch: 1, Rounds: []int{43, 44, 45}, Of: 28, JITBefore: 1.5, JITAfter: 1.1,
				Cost: analyze.CPUNoJIT, ChangeBefore: 22.84, ChangeAfter: 19.9}}}
	var b strings.Builder
	if err := Text(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rounds left out while a start settled (over them → over the start's rounds counted): " +
			"start 1 baseline 5 of 40 (its compilers' CPU 9.1 → 0.8 ms/s); start 2 v 2 of 30 (its compilers' CPU 31.0 → 1.2 ms/s), " +
			"baseline beside v 1 of 30 (its compilers' CPU 12.0 → 1.0 ms/s), v 3 of 28 (CPU per request without JIT +22.8% → +19.9% against the baseline)",
		"measured 6.9 of 10.0 min (69%) in windows, 5.8 min of them counted (the rest while starts settled)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	s.Settling, s.Measured.CountedS = nil, 0
	if got := settlingLine(s); got != "" {
		t.Errorf("nothing left out: %q", got)
	}
}

// TestWarmupStartsLine: the report names the rounds left out beside a
// warm-up's first load, with their load step where the run has several.
func TestWarmupStartsLine(t *testing.T) {
	head := "rounds left out as a start ahead of its turn began its warm-up beside them (its first seconds fall on one trial of the round more than the other): "
	for _, tt := range []struct {
		name  string
		steps []analyze.Step
		rs    []analyze.StepRounds
		want  string
	}{
		{"none", []analyze.Step{{Index: 0, Users: 20}}, nil, ""},
		{"one step", []analyze.Step{{Index: 0, Users: 20}}, []analyze.StepRounds{{Step: 0, Rounds: []int{2, 11, 15}}}, head + "2, 11, 15"},
		{"two steps", []analyze.Step{{Index: 0, Rate: 100}, {Index: 1, Rate: 200}},
			[]analyze.StepRounds{{Step: 0, Rounds: []int{3}}, {Step: 1, Rounds: []int{4, 9}}}, head + "100 req/s: 3; 200 req/s: 4, 9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &analyze.Summary{Steps: tt.steps, WarmupStarts: tt.rs}
			if got := warmupStartsLine(s); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
