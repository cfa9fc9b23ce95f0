package analyze

import (
	"math"
	"testing"

	"github.com/tollperf/toll/record"
)

// controlName is scenario.ControlVariant (analyze reads only the manifest).
const controlName = "control"

// TestControlCorrectsABias runs a method that makes every variant but the
// baseline 3% dearer (a place in the round, a baseline warmed by running
// twice): without a control the A/A twin reads +3%, a false positive, and
// the +10% variant +13%; with the run's A/A control both are corrected.
func TestControlCorrectsABias(t *testing.T) {
	const bias = 1.03
	truth := map[string]float64{"baseline": 1, "twin": 1, "plus10": 1.10, controlName: 1}
	noise := map[string][]float64{
		"baseline":  {1.000, 1.004, 0.997, 1.002, 0.999, 1.001, 0.998, 1.003},
		"twin":      {1.002, 0.998, 1.001, 0.999, 1.003, 0.997, 1.000, 1.002},
		"plus10":    {0.999, 1.002, 1.000, 0.998, 1.001, 1.003, 0.997, 1.000},
		controlName: {1.001, 0.999, 1.002, 1.000, 0.998, 1.001, 1.003, 0.999},
	}
	summarize := func(control bool) *Summary {
		variants := []string{"baseline", "twin", "plus10"}
		m := &record.Manifest{Scenario: "x", Baseline: "baseline"}
		if control {
			variants = append(variants, controlName)
			m.Control = controlName
		}
		m.Variants = variants
		var trials []*record.Trial
		for r := 1; r <= 8; r++ {
			for _, v := range variants {
				cpu := 0.001 * truth[v] * noise[v][r-1]
				if v != "baseline" {
					cpu *= bias
				}
				trials = append(trials, synthetic(t, len(trials)+1, r, v, 4, 100, cpu, 1000))
			}
		}
		s, err := Summarize(m, trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	without := summarize(false)
	if d := deltaOf(t, without, "twin", CPUPerRequest); !d.Significant || d.Controlled {
		t.Fatalf("without a control the biased twin should read a (false) change: %+v", d)
	}

	with := summarize(true)
	if d := deltaOf(t, with, "twin", CPUPerRequest); d.Significant || !d.Controlled {
		t.Errorf("with the control, twin: %+v (controlled %v), want ~", d.Reading, d.Controlled)
	}
	if d := deltaOf(t, with, "plus10", CPUPerRequest); !d.Significant || !d.Controlled || math.Abs(*d.Pct-10) > 1 {
		t.Errorf("with the control, plus10: %+v, want +10%% ± a little", d.Reading)
	}
	if d := deltaOf(t, with, controlName, CPUPerRequest); d.Controlled || !d.Significant {
		t.Errorf("the control itself is compared with the baseline alone and shows the bias: %+v", d)
	}
	var warned bool
	for _, w := range with.Warnings {
		warned = warned || w.Code == WarnControlBias
	}
	if !warned {
		t.Errorf("no warning of the control's bias: %q", with.Warnings)
	}
	for _, h := range with.Headlines {
		if h.Variant == controlName {
			t.Errorf("the control has a headline: %+v", h)
		}
	}
}
