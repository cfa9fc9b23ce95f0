package stats

import (
	"math"
	"testing"
)

func TestBetweenGroups(t *testing.T) {
	for _, tt := range []struct {
		name   string
		groups [][]float64
		want   float64
		ok     bool
	}{
		// Means 1 and 3 (variance 2), each with s² = 1 over 2 values
		// (squared standard error 0.5): 2 − 0.5.
		{"two groups apart", [][]float64{{0.293, 1.707}, {2.293, 3.707}}, 1.5, true},
		{"groups alike", [][]float64{{0, 2}, {0, 2}, {0, 2}}, 0, true},
		{"one group", [][]float64{{1, 2, 3}}, 0, false},
		{"single values passed over", [][]float64{{1}, {5}, {1, 2}}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := BetweenGroups(tt.groups)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-3 {
				t.Errorf("BetweenGroups = %g, %v; want %g, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
