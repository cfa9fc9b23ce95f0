package analyze

import (
	"math"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestJVMStartNoise checks that a load test whose JVMs started once
// carries the start-to-start term in its CPU intervals: a twin whose JVM
// drew 3% dearer code than the baseline's, the same in every round, reads a
// change when restarted every round would have shown it round to round,
// and no change when started once, where no round can show it; a JVM
// that is not there, or a per-round restart, leaves the intervals as they
// were. toll compare between two such runs carries it for both.
func TestJVMStartNoise(t *testing.T) {
	noise := []float64{1.000, 1.004, 0.997, 1.002, 0.999, 1.001, 0.998, 1.003, 1.001, 0.999,
		1.002, 0.998, 1.000, 1.003, 0.997, 1.001, 0.999, 1.002, 0.998, 1.000}
	// summarize runs the twin beside the baseline, its JVM drawing code
	// draws[i] times as dear in the i-th of len(draws) starts.
	var cal *record.Calibration // the manifest's; nil: a run recorded before manifests carried it
	summarize := func(restart string, jvm bool, draws ...float64) *Summary {
		m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "twin"}, Restart: restart, Rounds: len(noise), Workload: "load", Calibration: cal}
		if len(draws) > 1 {
			m.Starts = len(draws)
		}
		var trials []*record.Trial
		for r := 1; r <= len(noise); r++ {
			launch := (r - 1) * len(draws) / len(noise)
			for _, v := range m.Variants {
				cpu := 0.001 * noise[(r+len(v))%len(noise)]
				if v == "twin" {
					cpu *= draws[launch]
				}
				tr := synthetic(t, len(trials)+1, r, v, 4, 100, cpu, 1000)
				tr.Launch = launch
				if jvm {
					for i := range tr.Samples[0].Points {
						tr.Samples[0].Points[i].JVM = &record.JVMSample{ClassesLoaded: 9000, HeapUsed: 64 << 20}
					}
				}
				trials = append(trials, tr)
			}
		}
		s, err := Summarize(m, trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	warned := func(s *Summary) bool {
		for _, w := range s.Warnings {
			if w.Code == WarnJVMStarts {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name        string
		restart     string
		jvm         bool
		significant bool
		carried     bool
	}{
		{"JVMs started once", "once", true, false, true},
		{"JVMs restarted every round", "per-round", true, true, false},
		{"no JVM, started once", "once", false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := summarize(tt.restart, tt.jvm, 1.03)
			d := deltaOf(t, s, "twin", CPUPerRequest)
			if d.Significant != tt.significant {
				t.Errorf("a 3%% draw read %+v, want significant: %v", d.Reading, tt.significant)
			}
			if got := len(s.StartNoisePct) > 0; got != tt.carried || warned(s) != tt.carried {
				t.Errorf("start_noise_pct %v, warning %v; want carried: %v", s.StartNoisePct, warned(s), tt.carried)
			}
			if tt.carried && s.StartNoisePct[CPUPerRequest] != JVMStartNoisePct(CPUPerRequest) {
				t.Errorf("start_noise_pct %v, want CPU per request's %.1f%%", s.StartNoisePct, JVMStartNoisePct(CPUPerRequest))
			}
			if rss := deltaOf(t, s, "twin", RSS); rss.Significant {
				t.Errorf("RSS, the same on both sides, read %+v", rss.Reading)
			}
		})
	}
	// A twice larger draw is still read through the term.
	if d := deltaOf(t, summarize("once", true, 1.15), "twin", CPUPerRequest); !d.Significant {
		t.Errorf("a 15%% change with JVMs started once read %+v, want it resolved", d.Reading)
	}

	// The calibration the manifest records is the one applied: the default
	// recorded there reads as above, and one that measured no
	// start-to-start term leaves the 3% draw resolved and unwarned.
	def := record.DefaultCalibration()
	cal = &def
	if d := deltaOf(t, summarize("once", true, 1.03), "twin", CPUPerRequest); d.Significant {
		t.Errorf("with the default calibration recorded, a 3%% draw read %+v, want it carried", d.Reading)
	}
	cal = &record.Calibration{RunNoisePct: def.RunNoisePct}
	if s := summarize("once", true, 1.03); !deltaOf(t, s, "twin", CPUPerRequest).Significant || len(s.StartNoisePct) > 0 || warned(s) {
		t.Errorf("with no start-to-start term recorded, a 3%% draw read %+v (start_noise_pct %v, warned %v), want it resolved and no term",
			deltaOf(t, s, "twin", CPUPerRequest).Reading, s.StartNoisePct, warned(s))
	}
	cal = nil

	// Several starts in one run: a 4% change resolved over four starts
	// that agree, not over one; four starts that disagree more than two
	// starts usually do widen the interval to their spread, and say so.
	for _, tt := range []struct {
		name        string
		draws       []float64
		significant bool
		spread      bool
	}{
		{"one start", []float64{1.04}, false, false},
		{"four starts that agree", []float64{1.045, 1.035, 1.04, 1.04}, true, false},
		{"four starts that disagree", []float64{1.14, 0.94, 1.12, 0.96}, false, true},
	} {
		s := summarize("once", true, tt.draws...)
		d := deltaOf(t, s, "twin", CPUPerRequest)
		if d.Significant != tt.significant {
			t.Errorf("%s: read %+v, want significant: %v", tt.name, d.Reading, tt.significant)
		}
		prior := 100 * math.Expm1(math.Sqrt(2*fixedVariance(record.DefaultCalibration(), CPUPerRequest, float64(len(tt.draws)))))
		if math.Abs(d.FixedPct-prior) > 1e-9 == !tt.spread || d.FixedPct < prior {
			t.Errorf("%s: fixed_pct %.2f, the term for %d starts %.2f; want it raised by the starts' spread: %v", tt.name, d.FixedPct, len(tt.draws), prior, tt.spread)
		}
		said := false
		for _, w := range s.Warnings {
			said = said || w.Code == WarnStartSpread && w.Args.Int(3) == 4
		}
		if said != tt.spread {
			t.Errorf("%s: warnings %q; want the starts' spread said: %v", tt.name, s.Warnings, tt.spread)
		}
	}

	// toll compare: two runs of JVMs started once, the same 3% apart,
	// read no change; restarted every round, they do.
	for _, tt := range []struct {
		restart     string
		significant bool
	}{{"once", false}, {"per-round", true}} {
		a, b := summarize(tt.restart, true, 1.0), summarize(tt.restart, true, 1.03)
		rc, err := CompareRuns(a, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, cc := range rc.Steps[0].Variants[0].Costs {
			if cc.Cost == CPUPerRequest && cc.Significant != tt.significant {
				t.Errorf("compare, restart %s: %+v, want significant: %v", tt.restart, cc.Reading, tt.significant)
			}
		}
	}
}
