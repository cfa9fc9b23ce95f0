package stats

import (
	"math"
	"testing"
)

// The fast t quantile agrees with the exact one where it replaces it.
func TestTQuantileN(t *testing.T) {
	for _, n := range []int{2, 5, 30, 31, 40, 100, 1000, 100000} {
		if got, want := TQuantileN(n), TQuantile(float64(n-1)); math.Abs(got-want) > 1e-4 {
			t.Errorf("TQuantileN(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestRoundsFor(t *testing.T) {
	for _, tt := range []struct {
		name              string
		sd2, fixed2, lim  float64
		nMin, maxN, wantN int
	}{
		{"already there", 0.0001, 0, 0.1, 5, 1000, 5},
		{"out of reach", 1, 0.01, 0.1, 5, 1000, -1},
		// t·√(1/n) ≤ 0.2: n = 99 (t ≈ 1.984·0.1005 = 0.1994), not 98.
		{"classic", 1, 0, 0.2, 2, 100000, 99},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := RoundsFor(tt.sd2, tt.fixed2, tt.lim, tt.nMin, tt.maxN)
			if got != tt.wantN {
				t.Errorf("RoundsFor = %d, want %d", got, tt.wantN)
			}
			if got > tt.nMin && TQuantileN(got-1)*math.Sqrt(tt.sd2/float64(got-1)+tt.fixed2) <= tt.lim {
				t.Errorf("%d is not the least", got)
			}
		})
	}
}

func TestSlope(t *testing.T) {
	for _, tt := range []struct {
		name   string
		xs, ys []float64
		beta   float64
		small  bool
	}{
		{"exact line", []float64{1, 2, 3, 4}, []float64{2, 4, 6, 8}, 2, true},
		{"flat", []float64{1, 2, 3, 4}, []float64{5, 5, 5, 5}, 0, false},
		{"noise", []float64{1, 2, 3, 4, 5}, []float64{1, 3, 2, 1, 3}, 0.2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			beta, p := Slope(tt.xs, tt.ys)
			if math.Abs(beta-tt.beta) > 1e-9 || (p < 0.05) != tt.small {
				t.Errorf("β = %g, p = %g; want β = %g, p < 0.05 %v", beta, p, tt.beta, tt.small)
			}
		})
	}
}
