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

func TestWithinGroups(t *testing.T) {
	for _, tt := range []struct {
		name   string
		groups [][]float64
		want   float64
		ok     bool
	}{
		// Pair means 0 and 2 in each group: pooled s² = (1+1+1+1)/2 = 2,
		// over 2 pairs a group, averaged over 2 groups and divided by 2.
		{"two groups of two pairs", [][]float64{{0, 0, 2, 2}, {1, 1, 3, 3}}, 2.0 / 2 / 2, true},
		// A quantity in alternate values: every pair's mean is 1.
		{"alternate values hold still", [][]float64{{0, 2, 0, 2}, {2, 0, 2, 0}}, 0, true},
		{"an odd last value left out", [][]float64{{0, 0, 2, 2, 9}, {1, 1, 3, 3}}, 2.0 / 2 / 2, true},
		{"a group of one value", [][]float64{{0, 0, 2, 2}, {1}}, 0, false},
		{"one pair a group", [][]float64{{0, 1}, {2, 3}}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := WithinGroups(tt.groups)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("WithinGroups = %g, %v; want %g, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
