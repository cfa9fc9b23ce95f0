package analyze

import (
	"testing"

	"github.com/tollperf/toll/record"
)

// TestWarningsSayWhoChose checks that the warnings about what toll
// chooses in precision mode (warm-up, starts) carry who chose it, which
// their words follow (report's TestPrecisionWarningsNameNoSetting).
func TestWarningsSayWhoChose(t *testing.T) {
	rounds := map[int]*TrialCosts{1: {Services: map[string]map[Cost]float64{"app": {JITTime: 50}}}}
	wt := &record.Trial{Variant: "otel", Index: 3, Round: 2, VariantWarmupS: 300,
		VariantWarmup: &record.VariantWarmup{MaxS: 300, JITMsPerS: map[string]float64{"app": 20}}}
	drift := func(by warmupOwner) Warning {
		return Drift{Variant: "otel", Cost: CPUPerRequest, Rounds: 10, ChangePct: -30, by: by}.warning("10 req/s")
	}
	jit := func(by warmupOwner) Warning {
		w, _ := jitWarning("otel", "10 req/s", rounds, by)
		return w
	}
	starts := func(n int, chosen bool) Warning {
		w, _ := jvmStartWarning(jvmStartNoise(record.DefaultCalibration()), n, float64(n), chosen)
		return w
	}
	for _, tt := range []struct {
		name string
		w    Warning
		code WarningCode
		arg  int
		want any
	}{
		{"JIT, fixed design", jit(warmupByUser), WarnJITUnderLoad, 2, WarmupByUser},
		{"JIT, toll's warm-up", jit(warmupByToll), WarnJITUnderLoad, 2, WarmupByToll},
		{"JIT, restarted every round", jit(warmupFresh), WarnJITUnderLoad, 2, WarmupByFresh},
		{"warm-up, the scenario's rule", warmupWarning(wt, &record.WarmupUntil{JITBelowMs: 5, OverS: 10}), WarnWarmupUnsettled, 9, false},
		{"warm-up, toll's rule", warmupWarning(wt, &record.WarmupUntil{JITBelowMs: 5, OverS: 10, Auto: true}), WarnWarmupUnsettled, 9, true},
		{"drift, fixed design", drift(warmupByUser), WarnDrift, 6, WarmupByUser},
		{"drift, toll's warm-up", drift(warmupByToll), WarnDrift, 6, WarmupByToll},
		{"drift, restarted every round", drift(warmupFresh), WarnDrift, 6, WarmupByFresh},
		{"JVM started once", starts(1, false), WarnJVMStarts, 1, false},
		{"JVM starts toll chose", starts(3, true), WarnJVMStarts, 1, true},
	} {
		if tt.w.Code != tt.code || len(tt.w.Args) <= tt.arg || tt.w.Args[tt.arg] != tt.want {
			t.Errorf("%s: %+v, want %s with argument %d %v", tt.name, tt.w, tt.code, tt.arg, tt.want)
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

// TestJVMStartWarningWeighsStarts checks that the least change a run's
// starts resolve counts the starts as the rounds weigh them: three starts
// of which the last ran one round of 81 resolve about what two do.
func TestJVMStartWarningWeighsStarts(t *testing.T) {
	pct := jvmStartNoise(record.DefaultCalibration())
	var trials []*TrialCosts
	for r := range 81 {
		trials = append(trials, &TrialCosts{Variant: "baseline", Launch: min(r/40, 2)})
	}
	least := func(starts int, weighted float64) float64 {
		w, ok := jvmStartWarning(pct, starts, weighted, true)
		if !ok {
			t.Fatal("no warning")
		}
		return w.Args[4].(float64)
	}
	k := weightedStarts(trials, "baseline", 3)
	if k < 2 || k > 2.1 {
		t.Fatalf("weighted starts %.2f, want about 2", k)
	}
	if got, two, three := least(3, k), least(2, 2), least(3, 3); got < 0.98*two || got <= three {
		t.Errorf("three starts, the last of one round: resolves %.2f%%, want about two starts' %.2f%% (three alike: %.2f%%)", got, two, three)
	}
}
