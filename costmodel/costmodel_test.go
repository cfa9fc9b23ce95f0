package costmodel

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// steps measures a line fixed + per·rate at rates, each step off by noise
// of standard error se (and reported with that error).
func steps(rng *rand.Rand, fixed, per, se float64, rates ...float64) []Step {
	var out []Step
	for _, r := range rates {
		out = append(out, Step{Rate: r, Added: fixed + per*r + rng.NormFloat64()*se, SE: se})
	}
	return out
}

// TestRecoversBothParts checks that a cost with a known fixed part (0.011
// cores) and a known part per request (0.29 ms of CPU) is recovered, each
// within its interval in at least 90 of 100 fits, and that the line fits.
func TestRecoversBothParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const fixed, per = 0.011, 0.29e-3
	inFixed, inPer, fits := 0, 0, 0
	for range 100 {
		m, err := Fit(steps(rng, fixed, per, 0.004, 100, 300, 500, 700, 900))
		if err != nil {
			t.Fatal(err)
		}
		if f := m.FixedInterval(); f.Low <= fixed && fixed <= f.High {
			inFixed++
		}
		if p := m.PerRequestInterval(); p.Low <= per && per <= p.High {
			inPer++
		}
		if m.Fits() {
			fits++
		}
	}
	if inFixed < 90 || inPer < 90 || fits < 95 {
		t.Errorf("fixed part within its interval in %d of 100, per request in %d, fits in %d", inFixed, inPer, fits)
	}
}

// TestPredictionBetweenSteps checks the prediction interval at a rate
// between the steps: a new measurement there falls within it in about
// 95% of cases (at least 90 of 100), and n instances add n times as much.
func TestPredictionBetweenSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const fixed, per, se = 0.02, 0.5e-3, 0.005
	in := 0
	for range 100 {
		m, err := Fit(steps(rng, fixed, per, se, 100, 400, 700, 1000))
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(Load{Rates: []float64{550}})
		if err != nil {
			t.Fatal(err)
		}
		if obs := fixed + per*550 + rng.NormFloat64()*se; p.Low <= obs && obs <= p.High {
			in++
		}
		forty, _ := m.Predict(Load{Rates: repeat(550, 40)})
		if math.Abs(forty.Value-40*p.Value) > 1e-9 {
			t.Fatalf("40 instances: %v, one: %v", forty.Value, p.Value)
		}
	}
	if in < 90 {
		t.Errorf("a new measurement within the prediction interval in %d of 100", in)
	}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestRefusesOutsideTheSteps checks that a rate beyond the steps' range is
// refused, naming the range.
func TestRefusesOutsideTheSteps(t *testing.T) {
	m, err := Fit(steps(rand.New(rand.NewPCG(5, 6)), 0.01, 1e-4, 0.001, 100, 500, 900))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []float64{50, 1200} {
		if _, err := m.Predict(Load{Rates: []float64{r}}); !errors.Is(err, ErrOutside) {
			t.Errorf("%g req/s: %v, want ErrOutside", r, err)
		}
	}
	if _, err := m.Predict(Load{Rates: []float64{100, 900}}); err != nil {
		t.Errorf("at the steps' own rates: %v", err)
	}
}

// TestJumpDoesNotFit checks that a cost that jumps at one rate (a buffer
// that overflows) is said not to fit, and that a line through two steps
// fits by construction and says so.
func TestJumpDoesNotFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := steps(rng, 0.01, 1e-4, 0.001, 100, 300, 500, 700, 900)
	s[3].Added += 0.05
	s[4].Added += 0.05
	m, err := Fit(s)
	if err != nil {
		t.Fatal(err)
	}
	if m.Fits() {
		t.Errorf("a jump of 0.05 at 700 req/s fits (χ² %.1f on %d, p %.3g)", m.ChiSquare, m.DF, m.FitP)
	}
	m, _ = Fit(s[:2])
	if !m.Fits() || m.DF != 0 {
		t.Errorf("two steps: fits %v, df %d", m.Fits(), m.DF)
	}
	if _, err := Fit(s[:1]); !errors.Is(err, ErrFewSteps) {
		t.Errorf("one step: %v", err)
	}
}
