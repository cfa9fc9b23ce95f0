package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// series draws n points around level (step added from index at on), each
// with a standard error in [se, 2·se) and a between-run spread tau beyond
// it.
func series(rng *rand.Rand, n, at int, step, se, tau float64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		s := se * (1 + rng.Float64())
		y := rng.NormFloat64()*math.Hypot(s, tau) + 0.09
		if at > 0 && i >= at {
			y += step
		}
		pts[i] = Point{Y: y, SE: s}
	}
	return pts
}

// TestNoChangeFewFalseAlarms checks the false alarm rate on series where
// nothing changed: with the points' own errors only, and with runs that
// spread twice as much as their intervals say.
func TestNoChangeFewFalseAlarms(t *testing.T) {
	for _, tt := range []struct {
		name string
		runs int
		tau  float64
	}{
		{"errors as stated", 15, 0},
		{"runs spread beyond their errors", 15, 0.01},
		// Too short for the permutation test: Student's t judges them.
		{"seven runs, errors as stated", 7, 0},
		{"seven runs spread beyond their errors", 7, 0.01},
		{"eight runs spread beyond their errors", 8, 0.01},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const histories = 200
			alarms := 0
			for h := range histories {
				if len(Detect(series(rng, tt.runs, 0, 0, 0.005, tt.tau), Options{Seed: uint64(h)})) > 0 {
					alarms++
				}
			}
			// At 2% a change, binary segmentation's few further tests
			// keep it near 2%; 10 of 200 would be 5%.
			if alarms > 10 {
				t.Errorf("%d false alarms in %d histories of %d runs where nothing changed", alarms, histories, tt.runs)
			}
			t.Logf("%d false alarms in %d histories", alarms, histories)
		})
	}
}

// TestShortSeriesStepFound checks that a series too short for the
// permutation test ever to reach 2% still reads a step far beyond its
// runs' spread, at its run: a bisect's seven runs of one agent's releases
// in version order, four at about +125% against the baseline and three at
// about +20% (their intervals about ±5 and ±3 points).
func TestShortSeriesStepFound(t *testing.T) {
	var pts []Point
	for _, c := range []float64{123.3, 124.7, 133.8, 121.7, 20.5, 20.5, 18.1} {
		pts = append(pts, Point{Y: math.Log1p(c / 100), SE: 0.02})
	}
	if f := permutationFloor(len(pts), 4, 3); f < 0.02 {
		t.Fatalf("the permutation test's floor is %.3f: the series is not too short for it", f)
	}
	got := Detect(pts, Options{Seed: 1})
	if len(got) != 1 || got[0].Index != 4 {
		t.Fatalf("changes %+v, want one at run 5 (index 4)", got)
	}
	if r := math.Exp(got[0].Shift) - 1; r > -0.45 || r < -0.5 {
		t.Errorf("shift %+.1f%%, want about -47%%", 100*r)
	}
}

// TestStepFound checks that a +3% step (in log-ratio) at a known run is
// found at that run, with an interval that holds it, and nothing else.
func TestStepFound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	step := math.Log(1.03)
	exact, extra := 0, 0
	for h := range 20 {
		at := 5 + h%6
		pts := series(rng, 15, at, step, 0.005, 0)
		cs := Detect(pts, Options{Seed: uint64(h)})
		// A run next to the step may by chance read nearer the other
		// level: one run off is a miss of the exact run, not of the step.
		i := slices.IndexFunc(cs, func(c Change) bool { return c.Index >= at-1 && c.Index <= at+1 })
		if i < 0 {
			t.Fatalf("history %d: changes %+v, want one at %d", h, cs, at)
		}
		extra += len(cs) - 1
		c := cs[i]
		if c.Index == at {
			exact++
		}
		if lo, hi := c.Shift-1.96*c.ShiftSE, c.Shift+1.96*c.ShiftSE; step < lo-0.01 || step > hi+0.01 {
			t.Errorf("history %d: shift %.4f [%.4f, %.4f], want about %.4f", h, c.Shift, lo, hi, step)
		}
	}
	if exact < 18 || extra > 1 {
		t.Errorf("the step found at its exact run in %d of 20 histories, %d changes found beside it", exact, extra)
	}
}

// TestTwoSteps checks that binary segmentation finds a rise and a later
// fall.
func TestTwoSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pts := series(rng, 24, 8, 0.05, 0.005, 0)
	for i := 16; i < 24; i++ {
		pts[i].Y -= 0.05
	}
	cs := Detect(pts, Options{Seed: 1})
	if len(cs) != 2 || cs[0].Index != 8 || cs[1].Index != 16 || cs[0].Shift < 0 || cs[1].Shift > 0 {
		t.Errorf("changes %+v, want a rise at 8 and a fall at 16", cs)
	}
}

// TestSpreadIsNotAChange checks that runs spreading far beyond their
// intervals (a noisy machine) widen the levels rather than read as
// changes: the between-run term is estimated and used.
func TestSpreadIsNotAChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alarms := 0
	for h := range 50 {
		if len(Detect(series(rng, 15, 0, 0, 0.001, 0.02), Options{Seed: uint64(h)})) > 0 {
			alarms++
		}
	}
	if alarms > 3 {
		t.Errorf("%d of 50 noisy histories read a change", alarms)
	}
	e := Pool(series(rng, 40, 0, 0, 0.001, 0.02))
	if e.Tau < 0.01 || e.Tau > 0.03 {
		t.Errorf("between-run spread %.4f, want about 0.02", e.Tau)
	}
}

// TestNewest checks the CI question: a newest run 5% above a steady
// history starts a change; one at the same level does not; too short a
// history gives no answer.
func TestNewest(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	pts := series(rng, 10, 0, 0, 0.005, 0)
	pts = append(pts, Point{Y: 0.09 + math.Log(1.05), SE: 0.005})
	shift, se, _, ok := Newest(pts, 0)
	if !ok || shift-1.96*se < math.Log(1.02) {
		t.Errorf("newest +5%%: shift %.4f ± %.4f (ok %v), want beyond +2%%", shift, 1.96*se, ok)
	}
	pts[len(pts)-1].Y = 0.09
	if shift, se, _, _ = Newest(pts, 0); shift-1.96*se > 0 {
		t.Errorf("newest unchanged: shift %.4f ± %.4f reads a rise", shift, 1.96*se)
	}
	if _, _, _, ok := Newest(pts[:2], 0); ok {
		t.Error("two points gave an answer")
	}
}
