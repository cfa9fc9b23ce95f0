package stats

import (
	"slices"
	"testing"
)

func TestHolm(t *testing.T) {
	for _, tt := range []struct {
		name string
		ps   []float64
		want []bool
	}{
		{"none", nil, []bool{}},
		{"one of three by chance", []float64{0.03, 0.5, 0.6}, []bool{false, false, false}},
		{"a real change", []float64{0.5, 0.0001, 0.03}, []bool{false, true, false}},
		{"both hold", []float64{0.01, 0.02}, []bool{true, true}},
		{"stops at the first that fails", []float64{0.001, 0.04, 0.04}, []bool{true, false, false}},
		{"in the order given", []float64{0.001, 0.2, 0.02}, []bool{true, false, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Holm(tt.ps, 0.05); !slices.Equal(got, tt.want) {
				t.Errorf("Holm(%v) = %v, want %v", tt.ps, got, tt.want)
			}
		})
	}
}
