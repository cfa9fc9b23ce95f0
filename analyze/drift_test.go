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
