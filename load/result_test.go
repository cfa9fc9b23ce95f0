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
