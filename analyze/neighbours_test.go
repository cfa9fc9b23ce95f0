package analyze

import (
	"math"
	"slices"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestNeighbourCores checks a trial's neighbour CPU: the idle variants' CPU
// seconds over the seconds they were read, in cores, and none when no variant ran beside it.
func TestNeighbourCores(t *testing.T) {
	tr := &record.Trial{Neighbours: []record.NeighbourCPU{{Variant: "a", CPUS: 0.2, S: 4}, {Variant: "b", CPUS: 0.1, S: 4}}}
	if got, ok := neighbourCores(tr); !ok || got < 0.0749 || got > 0.0751 {
		t.Errorf("neighbourCores = %v, %v; want 0.075 cores", got, ok)
	}
	tr.Neighbours = nil
	if _, ok := neighbourCores(tr); ok {
		t.Error("a trial with no neighbours read as having some")
	}
}

// TestNeighbourWarning checks that the report warns when the idle
// neighbours of the baseline's windows and of a variant's used the machine
// unevenly, and only then.
func TestNeighbourWarning(t *testing.T) {
	rounds := func(cores []float64, neighbour string) map[int]*TrialCosts {
		out := map[int]*TrialCosts{}
		for i, c := range cores {
			c := c
			tc := &TrialCosts{Round: i + 1}
			if c >= 0 {
				tc.NeighbourCores, tc.neighbours = &c, []string{neighbour}
			}
			out[i+1] = tc
		}
		return out
	}
	tests := []struct {
		name          string
		base, variant []float64 // neighbour cores per round; < 0: none ran
		baseCores     float64
		want          []float64 // the baseline's neighbours' cores, % of its CPU, the variant's; nil for no warning
	}{
		{"even", []float64{0.01, 0.012}, []float64{0.011, 0.01}, 0.2, nil},
		{"uneven but small against the baseline's CPU", []float64{0.012, 0.012}, []float64{0.002, 0.002}, 0.5, nil},
		{"the variant's idle background falls on the baseline", []float64{0.03, 0.03}, []float64{0.001, 0.001}, 0.2, []float64{0.03, 15, 0.001}},
		{"the other way", []float64{0.001}, []float64{0.03}, 0.2, []float64{0.001, 0.5, 0.03}},
		{"no neighbours (restart per trial)", []float64{-1, -1}, []float64{-1, -1}, 0.2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := neighbourWarning("baseline", "agent", "300 req/s", rounds(tt.base, "agent"), rounds(tt.variant, "baseline"), tt.baseCores)
			switch {
			case tt.want == nil && ok:
				t.Errorf("warned: %+v", got)
			case tt.want != nil && (!ok || got.Code != WarnNeighboursUneven ||
				math.Abs(got.Args.Float(4)-tt.want[0]) > 1e-9 || math.Abs(got.Args.Float(5)-tt.want[1]) > 1e-6 || math.Abs(got.Args.Float(7)-tt.want[2]) > 1e-9 ||
				!slices.Equal(got.Args.Strs(3), []string{"agent"}) || !slices.Equal(got.Args.Strs(6), []string{"baseline"})):
				t.Errorf("warning %+v, want the figures %v", got, tt.want)
			}
		})
	}
}
