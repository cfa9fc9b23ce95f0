package jvm

import (
	"path/filepath"
	"testing"
	"time"
)

func openFixture(tb testing.TB) *Reader {
	tb.Helper()
	r, err := Open(filepath.Join("testdata", "g1.hsperfdata"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// TestCountersCost checks that a Counters call on a mapped file is cheap:
// a few loads, two allocations (the Generations and Collectors slices).
func TestCountersCost(t *testing.T) {
	r := openFixture(t)
	if allocs := testing.AllocsPerRun(1000, func() { r.Counters() }); allocs > 2 {
		t.Errorf("Counters: %.1f allocations, want at most 2", allocs)
	}
	const n = 10000
	start := time.Now()
	for range n {
		r.Counters()
	}
	per := time.Since(start) / n
	t.Logf("Counters: %v a call", per)
	if per > 50*time.Microsecond { // about 1 µs; allowing for a loaded machine or -race
		t.Errorf("Counters: %v a call, want microseconds", per)
	}
}

func BenchmarkCounters(b *testing.B) {
	r := openFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Counters(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLong(b *testing.B) {
	r := openFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.Long("sun.gc.metaspace.used"); !ok {
			b.Fatal("no sun.gc.metaspace.used")
		}
	}
}

// BenchmarkOpen is the one-off cost of mapping and indexing a file.
func BenchmarkOpen(b *testing.B) {
	p := filepath.Join("testdata", "g1.hsperfdata")
	b.ReportAllocs()
	for b.Loop() {
		r, err := Open(p)
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}
