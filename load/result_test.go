package load

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestHistIndexMatchesHdrHistogram checks the lock-free recording against
// hdrhistogram's own: a value counted at histIndex and imported gives the same
// histogram as recording it.
func TestHistIndexMatchesHdrHistogram(t *testing.T) {
	if histCountsLen != histIndex(histHighest)+1 {
		t.Fatalf("histCountsLen = %d, want %d", histCountsLen, histIndex(histHighest)+1)
	}
	if n := len(newHistogram().Export().Counts); histCountsLen > n {
		t.Fatalf("histCountsLen = %d exceeds hdrhistogram's %d counts", histCountsLen, n)
	}
	values := []int64{1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 999_999, 1_000_000, histHighest - 1, histHighest}
	for v := int64(1); v < 1<<26; v <<= 1 {
		values = append(values, v-1, v, v+1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		values = append(values, 1+rng.Int64N(histHighest))
	}
	want := newHistogram()
	counts := make([]int64, histCountsLen)
	for _, v := range values {
		v = max(v, histLowest)
		one := newHistogram()
		if err := one.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		c := make([]int64, histCountsLen)
		c[histIndex(v)]++
		if got := histogramOf(c); !got.Equals(one) {
			t.Fatalf("value %d: index %d does not match hdrhistogram", v, histIndex(v))
		}
		_ = want.RecordValue(v)
		counts[histIndex(v)]++
	}
	if got := histogramOf(counts); !got.Equals(want) || got.TotalCount() != int64(len(values)) {
		t.Error("histogram of all values differs from hdrhistogram's")
	}
}

func TestMicrosClamps(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{
		{-time.Second, 1},
		{0, 1},
		{999 * time.Nanosecond, 1},
		{1500 * time.Microsecond, 1500},
		{time.Minute, histHighest},
		{time.Hour, histHighest},
	} {
		if got := micros(tt.d); got != tt.want {
			t.Errorf("micros(%s) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestCountsQuantileMatchesHdrHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		values func() time.Duration
		n      int
	}{
		{"sub-millisecond", func() time.Duration { return time.Duration(50+rng.IntN(900)) * time.Microsecond }, 5000},
		{"long tail", func() time.Duration { return time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond)) }, 20000},
		{"seconds", func() time.Duration { return time.Duration(rng.IntN(50)) * time.Second }, 300},
		{"one value", func() time.Duration { return 3 * time.Microsecond }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c counts
			for range tt.n {
				c.add(tt.values())
			}
			h := c.histogram()
			for _, q := range []float64{1, 50, 90, 99, 99.9, 100} {
				if got, want := c.quantile(q), h.ValueAtQuantile(q); got != want {
					t.Errorf("quantile(%v) = %d, hdrhistogram says %d", q, got, want)
				}
			}
		})
	}
	var empty counts
	if got := empty.quantile(99); got != 0 {
		t.Errorf("quantile of no values = %d, want 0", got)
	}
}

// The live display reads a second's figures once a second for as long as a
// run lasts; reading them must not allocate.
func TestSnapshotDoesNotAllocate(t *testing.T) {
	r := newRecorder(2, 1)
	for i := range 1000 {
		r.record(r.begin(0, 0), 0, time.Duration(100+i)*time.Microsecond, outcomeOK)
	}
	var s Second
	if allocs := testing.AllocsPerRun(20, func() { s = r.snapshot(0) }); allocs != 0 {
		t.Errorf("snapshot allocates %.0f times", allocs)
	}
	if s.Completed != 1000 || s.P99 < 1000*time.Microsecond || s.P99 > 1100*time.Microsecond {
		t.Errorf("snapshot = %+v, want 1000 completed, p99 about 1.09 ms", s)
	}
}
