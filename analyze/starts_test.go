package analyze

import (
	"testing"

	"github.com/tollperf/toll/record"
)

// TestStartVaryingCostsCompareStarts checks that a cost that differs
// between two starts of one program (memory here) is compared over starts
// when the services started once per start: one start gives no verdict,
// however steady its rounds; starts that disagree give an interval that
// holds their disagreement; a change every start shows is still found;
// and services started every round are compared round by round.
func TestStartVaryingCostsCompareStarts(t *testing.T) {
	noise := []float64{1.000, 1.001, 0.999, 1.002, 0.998, 1.001, 0.999, 1.000, 1.002, 0.998, 1.001, 0.999}
	// summarize runs a twin whose RSS is draws[i] times the baseline's in
	// the i-th of len(draws) starts (restart once), or in round i with
	// restart per-round.
	summarize := func(restart string, draws ...float64) *Summary {
		m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "twin"}, Restart: restart, Rounds: len(noise), Workload: "load"}
		if restart == "once" && len(draws) > 1 {
			m.Starts = len(draws)
		}
		var trials []*record.Trial
		for r := 1; r <= len(noise); r++ {
			launch := (r - 1) * len(draws) / len(noise)
			for _, v := range m.Variants {
				tr := synthetic(t, len(trials)+1, r, v, 4, 100, 0.001*noise[(r+len(v))%len(noise)], 1000)
				tr.Launch = launch
				draw := 1.0
				if v == "twin" {
					draw = draws[launch]
					if restart != "once" {
						draw = draws[(r-1)%len(draws)]
					}
				}
				for i := range tr.Samples[0].Points {
					tr.Samples[0].Points[i].RSS = uint64(float64(50<<20) * draw * noise[(r+i)%len(noise)])
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
	for _, tt := range []struct {
		name        string
		restart     string
		draws       []float64
		starts      int
		interval    bool
		significant bool
	}{
		{"one start, 7% apart", "once", []float64{1.07}, 1, false, false},
		{"two starts that disagree", "once", []float64{1.07, 0.95}, 2, true, false},
		{"four starts that disagree", "once", []float64{1.07, 0.94, 1.03, 0.97}, 4, true, false},
		{"four starts, 10% dearer in each", "once", []float64{1.10, 1.11, 1.09, 1.10}, 4, true, true},
		{"a start every round", "per-round", []float64{1.07, 0.94, 1.03, 0.97}, 0, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := summarize(tt.restart, tt.draws...)
			d := deltaOf(t, s, "twin", RSS)
			if d.Starts != tt.starts || (d.CILow != nil) != tt.interval || d.Significant != tt.significant {
				t.Errorf("RSS %+v over %d starts (interval %v); want %d starts, interval %v, significant %v",
					d.Reading, d.Starts, d.CILow != nil, tt.starts, tt.interval, tt.significant)
			}
			if !tt.interval && d.NoVerdict != NoVerdictFewStarts {
				t.Errorf("no verdict %q, want %q", d.NoVerdict, NoVerdictFewStarts)
			}
			for _, h := range s.Headlines {
				for _, c := range h.Changes {
					if (c.Cost == RSS || c.Cost == Memory) && !tt.interval {
						t.Errorf("headline names %s (%+v) without a verdict", c.Label, c.Delta.Reading)
					}
				}
			}
			if cpu := deltaOf(t, s, "twin", CPUPerRequest); cpu.Starts != 0 {
				t.Errorf("CPU per request compared over starts: %+v", cpu)
			}
		})
	}
}

// TestStartsFloor checks that two starts whose differences agree by chance,
// far more closely than their rounds spread, give no change (an identical
// twin's collection time read −0.0081 and −0.0080 ms/s in its two starts,
// its rounds 0 or about 0.1 ms/s each), and that a change every round
// shows, well above that spread, is still found.
func TestStartsFloor(t *testing.T) {
	info := CostInfo{Cost: "jvm_gc_ms_per_s", Label: "JVM GC time", Unit: "ms/s", Digits: 2}
	// rounds returns base and variant values over two starts of n rounds
	// each: both sides collect 0.2 ms/s in every round (or, every, in
	// every other), the variant shift[start] more over all its rounds,
	// ±spread in turn.
	rounds := func(n int, shift [2]float64, spread float64, every int) (base, vari []float64, launches []int) {
		for l := range 2 {
			e := spread
			for r := range n {
				b, v := 0.0, 0.0
				if r%every == every-1 {
					b, v, e = 0.2, 0.2+float64(every)*shift[l]+e, -e
				}
				base, vari, launches = append(base, b), append(vari, v), append(launches, l)
			}
		}
		return base, vari, launches
	}
	for _, tt := range []struct {
		name        string
		shift       [2]float64
		spread      float64
		every       int
		significant bool
	}{
		{"two starts agreeing by chance", [2]float64{-0.0081, -0.0080}, 0.05, 2, false},
		{"a change far above the rounds' spread", [2]float64{0.15, 0.16}, 0.002, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, vari, launches := rounds(8, tt.shift, tt.spread, tt.every)
			d := compareStarts(info, base, vari, launches, 0)
			if d.Starts != 2 || d.CILow == nil {
				t.Fatalf("%d starts, interval %v; want 2 starts and an interval", d.Starts, d.CILow != nil)
			}
			if d.Significant != tt.significant {
				t.Errorf("%+v [%g, %g] p=%g: significant %v, want %v", d.Reading, *d.CILow, *d.CIHigh, *d.PValue, d.Significant, tt.significant)
			}
		})
	}
}
