package bisect

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// versions returns a Measure of versions whose overheads (in percent) are
// levels, each measurement off by noise of standard error se (log scale),
// and the measurements it made.
func versions(levels []float64, se float64, seed uint64) (Measure, *int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := 0
	return func(_ context.Context, i int) (Estimate, error) {
		n++
		return Estimate{Y: math.Log1p(levels[i]/100) + rng.NormFloat64()*se, SE: se}, nil
	}, &n
}

// TestFindsTheRelease checks that among twelve releases, one of which
// made the agent 4% dearer (and another 0.5% cheaper, below the size),
// the search names the dearer one, confirmed, with an interval that
// holds +4% (in 9 of 10 searches at least: a 95% interval), in a few
// measurements.
func TestFindsTheRelease(t *testing.T) {
	levels := []float64{8, 8, 8, 7.5, 7.5, 7.5, 7.5, 11.8, 11.8, 11.8, 11.8, 11.8} // 1.075 · 1.04 = 1.118
	missed := 0
	for seed := range uint64(10) {
		m, n := versions(levels, 0.003, seed)
		r, err := Search(context.Background(), len(levels), m, Options{SizePct: 2})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if r.Culprit != 7 || r.LastGood != 6 || !r.Confirmed {
			t.Errorf("seed %d: culprit %d after %d, confirmed %v; want 7 after 6", seed, r.Culprit, r.LastGood, r.Confirmed)
		}
		if r.Low > 4 || r.High < 4 {
			missed++
		}
		if *n > 16 {
			t.Errorf("seed %d: %d measurements for 12 versions", seed, *n)
		}
	}
	if missed > 1 {
		t.Errorf("the culprit's interval missed its +4%% in %d of 10 searches", missed)
	}
}

// TestNothingToFind checks that versions alike from first to last name no
// culprit.
func TestNothingToFind(t *testing.T) {
	m, _ := versions([]float64{8, 8.2, 7.9, 8, 8.1, 8}, 0.003, 1)
	r, err := Search(context.Background(), 6, m, Options{SizePct: 2})
	if err != nil || r.Culprit != -1 {
		t.Errorf("culprit %d (%v), want none", r.Culprit, err)
	}
}

// TestMeasuresAgainWhenUnclear checks that a comparison whose interval
// reaches across the size is measured again, and that a change of about
// the size itself ends as unclear rather than as a guess.
func TestMeasuresAgainWhenUnclear(t *testing.T) {
	m, n := versions([]float64{8, 12.8}, 0.02, 3) // +4.4%, each measurement ±4%
	r, err := Search(context.Background(), 2, m, Options{SizePct: 2})
	if err != nil || r.Culprit != 1 || *n <= 2 {
		t.Errorf("culprit %d after %d measurements (%v), want 1 after more than 2", r.Culprit, *n, err)
	}
	m, _ = versions([]float64{8, 10.16}, 0.01, 4) // exactly +2%
	if _, err := Search(context.Background(), 2, m, Options{SizePct: 2, MaxMeasures: 3}); !errors.Is(err, ErrUnclear) {
		t.Errorf("a change of the size itself: %v, want ErrUnclear", err)
	}
}

// TestJudgesByLevel checks that versions far noisier than the size are
// still placed, by which of the two levels they are nearer: a change of
// four times the cost among runs each ±12%, with a size of 20%, found in
// a few measurements.
func TestJudgesByLevel(t *testing.T) {
	for seed := range uint64(10) {
		m, n := versions([]float64{0, 0, 0, 300, 300}, 0.06, seed)
		r, err := Search(context.Background(), 5, m, Options{SizePct: 20})
		if err != nil || r.Culprit != 3 || !r.Confirmed {
			t.Errorf("seed %d: culprit %d, confirmed %v (%v), want 3", seed, r.Culprit, r.Confirmed, err)
		}
		if *n > 8 {
			t.Errorf("seed %d: %d measurements", seed, *n)
		}
	}
}
