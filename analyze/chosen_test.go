package analyze

import (
	"regexp"
	"testing"

	"github.com/tollperf/toll/record"
)

// settingNamed matches the scenario settings and flags a warning may tell
// the user to change.
var settingNamed = regexp.MustCompile(`load\.variant_warmup|load\.warmup|starts:|--starts|restart:|restart less|more rounds|raise `)

// TestPrecisionWarningsNameNoSetting checks that in precision mode the
// warnings about what toll chooses (warm-up, starts, rounds) say what toll
// did, and that with a fixed design they still name the setting.
func TestPrecisionWarningsNameNoSetting(t *testing.T) {
	rounds := map[int]*TrialCosts{1: {Services: map[string]map[Cost]float64{"app": {JITTime: 50}}}}
	wt := &record.Trial{Variant: "otel", Index: 3, Round: 2, VariantWarmupS: 300,
		VariantWarmup: &record.VariantWarmup{MaxS: 300, JITMsPerS: map[string]float64{"app": 20}}}
	drift := func(by warmupOwner) string {
		return Drift{Variant: "otel", Cost: CPUPerRequest, Rounds: 10, ChangePct: -30, by: by}.message("10 req/s")
	}
	pct := jvmStartNoise(record.DefaultCalibration())
	for _, tt := range []struct {
		name          string
		fixed, chosen string
	}{
		{"JIT compiling under load", jitWarning("otel", "10 req/s", rounds, warmupByUser), jitWarning("otel", "10 req/s", rounds, warmupByToll)},
		{"JIT compiling under load, restarted every round", jitWarning("otel", "10 req/s", rounds, warmupByUser), jitWarning("otel", "10 req/s", rounds, warmupFresh)},
		{"warm-up unsettled", warmupWarning(wt, &record.WarmupUntil{JITBelowMs: 5, OverS: 10}), warmupWarning(wt, &record.WarmupUntil{JITBelowMs: 5, OverS: 10, Auto: true})},
		{"drift", drift(warmupByUser), drift(warmupByToll)},
		{"drift, restarted every round", drift(warmupByUser), drift(warmupFresh)},
		{"JVM started once", jvmStartWarning(pct, 1, false), jvmStartWarning(pct, 3, true)},
	} {
		if !settingNamed.MatchString(tt.fixed) {
			t.Errorf("%s, fixed design: names no setting: %s", tt.name, tt.fixed)
		}
		if tt.chosen == "" || settingNamed.MatchString(tt.chosen) {
			t.Errorf("%s, precision mode: %q", tt.name, tt.chosen)
		}
	}
}

// TestWarmupOwner checks who a run's warm-up is said to be chosen by: toll
// only when it chose it; a run in precision mode that restarts its
// services every round measures them fresh on purpose; a warm-up the
// scenario names, or a fixed design, is the user's.
func TestWarmupOwner(t *testing.T) {
	auto := &record.WarmupUntil{JITBelowMs: 5, OverS: 10, Auto: true}
	named := &record.WarmupUntil{JITBelowMs: 5, OverS: 10}
	prec := &record.Precision{}
	for _, tt := range []struct {
		name string
		m    record.Manifest
		want warmupOwner
	}{
		{"fixed design", record.Manifest{Restart: "once", Load: record.LoadSettings{VariantWarmupUntil: named}}, warmupByUser},
		{"precision, toll's warm-up", record.Manifest{Restart: "once", Precision: prec, Load: record.LoadSettings{VariantWarmupUntil: auto}}, warmupByToll},
		{"precision, the scenario's warm-up", record.Manifest{Restart: "once", Precision: prec, Load: record.LoadSettings{VariantWarmupUntil: named}}, warmupByUser},
		{"precision, restarted every round", record.Manifest{Restart: "per-round", Precision: prec}, warmupFresh},
		{"precision, restarted every trial", record.Manifest{Restart: "per-trial", Precision: prec}, warmupFresh},
		{"fixed design, restarted every round", record.Manifest{Restart: "per-round"}, warmupByUser},
	} {
		if got := warmupOwnerOf(&tt.m); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestBudgetCut checks when the warning about too few rounds says that the
// budget, not a setting toll chose, ended the step: only in precision mode,
// only when the budget stopped the step before its minimum of rounds.
func TestBudgetCut(t *testing.T) {
	prec := func(stop string, rounds int) *record.Precision {
		return &record.Precision{MinRounds: 5, Steps: []record.PrecisionStep{{Step: 1, Stop: stop, Rounds: rounds}}}
	}
	for _, tt := range []struct {
		name string
		p    *record.Precision
		step int
		want bool
	}{
		{"fixed design", nil, 1, false},
		{"budget before the minimum", prec("budget", 2), 1, true},
		{"budget after the minimum", prec("budget", 5), 1, false},
		{"reached", prec("reached", 5), 1, false},
		{"interrupted", prec("continue", 2), 1, false},
		{"another step", prec("budget", 2), 0, false},
	} {
		if got := budgetCut(&record.Manifest{Precision: tt.p}, tt.step); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
