package stats

import (
	"math"
	"testing"
)

func TestTInterval(t *testing.T) {
	for _, tt := range []struct {
		name     string
		xs       []float64
		mean     float64
		half     float64
		hasCI    bool
		excludes bool
	}{
		// Mean 2, s = √(2/3), n = 4: half-width t(0.975,3)·s/2.
		{"four values", []float64{1, 2, 2, 3}, 2, 3.1824463 * math.Sqrt(2.0/3.0) / 2, true, true},
		{"one value", []float64{5}, 5, 0, false, false},
		{"no values", nil, 0, 0, false, false},
		{"no spread", []float64{1, 1, 1}, 1, 0, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iv := TInterval(tt.xs)
			if math.Abs(iv.Mean-tt.mean) > 1e-12 || math.Abs((iv.High-iv.Low)/2-tt.half) > 1e-5 ||
				iv.HasCI != tt.hasCI || iv.Excludes != tt.excludes {
				t.Errorf("got %+v, want mean %g ± %g, CI %v, excludes 0 %v", iv, tt.mean, tt.half, tt.hasCI, tt.excludes)
			}
			if tt.excludes && iv.PValue > 0.05 {
				t.Errorf("p = %g for an interval that excludes 0", iv.PValue)
			}
		})
	}
}

func TestWidened(t *testing.T) {
	iv := TInterval([]float64{1, 2, 2, 3})
	for _, tt := range []struct {
		name string
		v    float64
		half float64
	}{
		{"nothing added", 0, (iv.High - iv.Low) / 2},
		{"negative ignored", -1, (iv.High - iv.Low) / 2},
		// s²/n = (2/3)/4; the quantile keeps 3 degrees of freedom.
		{"one added", 1, 3.1824463 * math.Sqrt(2.0/3.0/4+1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := iv.Widened(tt.v)
			if got := (w.High - w.Low) / 2; math.Abs(got-tt.half) > 1e-5 || w.Mean != iv.Mean {
				t.Errorf("half-width %g, want %g", got, tt.half)
			}
		})
	}
}

func TestAtLeast(t *testing.T) {
	// Two values that agree closely: s²/n = 0.0002²/2/2 = 1e-8.
	iv := TInterval([]float64{-0.0081, -0.0079})
	for _, tt := range []struct {
		name     string
		v        float64
		half     float64
		excludes bool
	}{
		{"a floor below the spread leaves it", 1e-9, 12.7062047 * 1e-4, true},
		{"none", 0, 12.7062047 * 1e-4, true},
		// The variance of the mean raised to 0.0003; one degree of freedom kept.
		{"a floor above the spread raises it", 3e-4, 12.7062047 * math.Sqrt(3e-4), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := iv.AtLeast(tt.v)
			if got := (f.High - f.Low) / 2; math.Abs(got-tt.half) > 1e-6*tt.half || f.Mean != iv.Mean || f.Excludes != tt.excludes {
				t.Errorf("half-width %g excludes %v, want %g %v", got, f.Excludes, tt.half, tt.excludes)
			}
			if tt.excludes == false && !(f.PValue > 0.05) {
				t.Errorf("p = %g, want above 0.05", f.PValue)
			}
		})
	}
}

func TestWelch(t *testing.T) {
	for _, tt := range []struct {
		name     string
		xs, ys   []float64
		mean     float64
		half     float64
		excludes bool
	}{
		// Equal variances, n = 4 each: df = 6, se = √(2·s²/4).
		{"equal variances", []float64{2, 3, 3, 4}, []float64{1, 2, 2, 3}, 1, 2.446912 * math.Sqrt(2*(2.0/3.0)/4), false},
		{"too few", []float64{2}, []float64{1, 2}, 0.5, 0, false},
		{"no spread", []float64{2, 2}, []float64{1, 1}, 1, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iv := Welch(tt.xs, tt.ys, 0)
			if math.Abs(iv.Mean-tt.mean) > 1e-12 || math.Abs((iv.High-iv.Low)/2-tt.half) > 1e-5 || iv.Excludes != tt.excludes {
				t.Errorf("got %+v", iv)
			}
		})
	}
}

func TestDiffOfIntervals(t *testing.T) {
	for _, tt := range []struct {
		name     string
		a, b     Interval
		low, hig float64
	}{
		{"exact", Interval{N: 3, Mean: 1, Low: 1, High: 1}, Interval{N: 3, Mean: 3, Low: 3, High: 3}, 2, 2},
		{
			// Each se = 1 over 5 values: Welch's df = 8.
			"equal", Interval{N: 5, Mean: 1, Low: 1 - TQuantile(4), High: 1 + TQuantile(4)},
			Interval{N: 5, Mean: 3, Low: 3 - TQuantile(4), High: 3 + TQuantile(4)},
			2 - TQuantile(8)*math.Sqrt2, 2 + TQuantile(8)*math.Sqrt2,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := DiffOfIntervals(tt.a.Mean, tt.a.Low, tt.a.High, tt.a.N, tt.b.Mean, tt.b.Low, tt.b.High, tt.b.N)
			if math.Abs(lo-tt.low) > 1e-9 || math.Abs(hi-tt.hig) > 1e-9 {
				t.Errorf("got [%g, %g], want [%g, %g]", lo, hi, tt.low, tt.hig)
			}
		})
	}
}

func TestBootstrap(t *testing.T) {
	xs := []float64{1, 2, 2, 3, 2.5, 1.5}
	lo, hi := Bootstrap(xs, 2000)
	if !(lo < Mean(xs) && Mean(xs) < hi) || lo < 1 || hi > 3 {
		t.Errorf("bootstrap [%g, %g] around %g", lo, hi, Mean(xs))
	}
	if lo2, hi2 := Bootstrap(xs, 2000); lo2 != lo || hi2 != hi {
		t.Error("the bootstrap does not repeat")
	}
	if lo, hi := Bootstrap(nil, 10); lo != 0 || hi != 0 {
		t.Errorf("no values: [%g, %g]", lo, hi)
	}
}

func TestDetectable(t *testing.T) {
	for _, tt := range []struct {
		half, power, want float64
	}{
		{1, 0.5, 1},
		{1, 0.8, 1.4294}, // (1.96 + 0.8416) / 1.96
		{2, 0.9, 3.3076}, // 2 · (1.96 + 1.2816) / 1.96
		{0, 0.8, 0},
	} {
		if got := Detectable(tt.half, tt.power); math.Abs(got-tt.want) > 1e-3 {
			t.Errorf("Detectable(%g, %g) = %.4f, want %.4f", tt.half, tt.power, got, tt.want)
		}
	}
	if z := ZQuantile(); math.Abs(z-1.95996) > 1e-4 {
		t.Errorf("ZQuantile() = %.5f, want 1.95996", z)
	}
}
