package analyze

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFindDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := func(n int, trendPct, noisePct float64) map[int]float64 {
		m := map[int]float64{}
		for r := 1; r <= n; r++ {
			m[r] = 2 * math.Pow(1+trendPct/100, float64(r-1)/float64(n-1)) * (1 + noisePct/100*rng.NormFloat64())
		}
		return m
	}
	tests := []struct {
		name string
		vals map[int]float64
		want bool
	}{
		{"JIT warm-up over a first step's 3 rounds", map[int]float64{1: 5.16, 2: 3.83, 3: 2.35}, true},
		{"3 rounds up and down", map[int]float64{1: 5.16, 2: 2.35, 3: 3.83}, false},
		{"3 rounds, small monotone change", map[int]float64{1: 2.0, 2: 1.98, 3: 1.95}, false},
		{"2 rounds", map[int]float64{1: 5, 2: 2}, false},
		{"JVM: 2.0 to 0.7 ms over 20 rounds", noisy(20, -65, 5), true},
		{"flat with 3% noise, 10 rounds", noisy(10, 0, 3), false},
		{"flat with 3% noise, 30 rounds", noisy(30, 0, 3), false},
		{"slow 4% drift, 30 rounds", noisy(30, 4, 1), false},
		{"25% drift under 3% noise, 10 rounds", noisy(10, 25, 3), true},
		{"a zero value", map[int]float64{1: 1, 2: 0, 3: 2, 4: 3, 5: 4}, false},
	}
	for _, tt := range tests {
		change, p, got := findDrift(tt.vals)
		if got != tt.want {
			pv := -1.0
			if p != nil {
				pv = *p
			}
			t.Errorf("%s: drift %v (change %.1f%%, p %.3g), want %v", tt.name, got, change, pv, tt.want)
		}
	}
}

// TestFindDriftFalseAlarms checks that pure noise rarely reads as a trend:
// over 2,000 runs of 10 rounds with 5% noise, at most 2% are flagged.
func TestFindDriftFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	flagged := 0
	const runs = 2000
	for range runs {
		m := map[int]float64{}
		for r := 1; r <= 10; r++ {
			m[r] = 1 + 0.05*rng.NormFloat64()
		}
		if _, _, ok := findDrift(m); ok {
			flagged++
		}
	}
	if flagged > runs*2/100 {
		t.Errorf("%d of %d noise-only runs flagged as drifting", flagged, runs)
	}
}

// TestRatioDrift checks the drift of a variant's per-round ratio to the
// baseline: none when both sides moved alike (the machine sped up), a trend
// when only the variant moved, and no answer with fewer than 3 paired
// rounds; and that the warning says which.
func TestRatioDrift(t *testing.T) {
	trials := func(f func(r int) float64, n int) map[int]*TrialCosts {
		m := map[int]*TrialCosts{}
		for r := 1; r <= n; r++ {
			m[r] = &TrialCosts{Costs: map[Cost]float64{CPUPerRequest: f(r)}}
		}
		return m
	}
	falling := func(r int) float64 { return 1 - 0.005*float64(r) + 0.01*float64(r%3) } // -20% over 40 rounds
	flat := func(r int) float64 { return 1 + 0.01*float64(r%3) }
	base := trials(falling, 40)
	for _, tt := range []struct {
		name  string
		x     map[int]*TrialCosts
		base  map[int]*TrialCosts
		trend bool
		ok    bool
		code  WarningCode
	}{
		{"both fell alike", trials(func(r int) float64 { return 1.5 * falling(r) }, 40), base, false, true, WarnDriftPaired},
		{"only the variant fell", trials(falling, 40), trials(flat, 40), true, true, WarnDrift},
		{"two rounds paired", trials(falling, 2), base, false, false, WarnDrift},
	} {
		change, trend, ok := ratioDrift(tt.x, tt.base, CPUPerRequest)
		if trend != tt.trend || ok != tt.ok {
			t.Errorf("%s: ratio change %+.1f%%, trend %v, ok %v; want trend %v, ok %v", tt.name, change, trend, ok, tt.trend, tt.ok)
		}
		d := Drift{Variant: "otel", Cost: CPUPerRequest, Rounds: 40, ChangePct: -20}
		if ok {
			d.RatioChangePct, d.RatioTrend = &change, trend
		}
		if w := d.warning("50 req/s"); w.Code != tt.code {
			t.Errorf("%s: %+v, want %s", tt.name, w, tt.code)
		}
	}
	wide := -10.4 // no trend by the fit, but too large to call steady
	if w := (Drift{Variant: "otel", Cost: CPUPerRequest, Rounds: 15, ChangePct: -32, RatioChangePct: &wide}).warning("100 req/s"); w.Code != WarnDrift {
		t.Errorf("a ratio that moved 10%% read as steady: %+v", w)
	}
	flatRatio := 0.4
	d := Drift{Variant: "baseline", Cost: CPUPerRequest, Rounds: 40, ChangePct: -22, RatioChangePct: &flatRatio, baseline: true}
	if w := d.warning("50 req/s"); w.Code != WarnDriftPaired || w.Args.Bool(6) != true || w.Args.Float(7) != 0.4 || w.Args.Bool(2) {
		t.Errorf("baseline drift with steady ratios: %+v", w)
	}
}
