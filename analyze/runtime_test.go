package analyze

import (
	"maps"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestJVMCostsAreItsMetrics: the costs toll's own rules name for the JVM
// are metrics of the JVM runtime, so that their rows come from it.
func TestJVMCostsAreItsMetrics(t *testing.T) {
	for _, c := range []Cost{JVMHeapUsed, JVMHeapCommit, JVMCommitted, JVMOffHeap, Metaspace, MetaCommitted,
		Classes, JVMThreads, GCTime, GCCount, JITTime, JITCompiles, JITCPU, JVMInit} {
		if _, ok := runtimeMetric(c); !ok {
			t.Errorf("%s is no metric of a runtime", c)
		}
	}
}

// TestRuntimeCostsOfOlderFiles: a trial file of typed JVM readings and
// one of readings by name give the same costs.
func TestRuntimeCostsOfOlderFiles(t *testing.T) {
	typed := func(i int) *record.JVMSample {
		return &record.JVMSample{Pid: 7, HeapUsed: uint64(100+i) << 20, HeapCommitted: 256 << 20, MetaspaceUsed: 40 << 20,
			ClassesLoaded: 9000, Threads: 30, GCCount: int64(10 + i), GCTime: 0.5 + 0.01*float64(i),
			JITCompiles: int64(5000 + 3*i), JITTime: 2 + 0.002*float64(i), JITCPU: 1 + 0.001*float64(i), InitS: 0.25}
	}
	for _, tt := range []struct {
		name string
		set  func(p *record.Sample, i int)
	}{
		{"typed", func(p *record.Sample, i int) { p.JVM = typed(i) }},
		{"by name", func(p *record.Sample, i int) {
			p.Runtimes = []record.RuntimeSample{{Runtime: "jvm", Pid: 7, Values: typed(i).Values()}}
		}},
	} {
		s := record.ServiceSeries{Service: "provider"}
		for i := range 11 {
			p := record.Sample{T: float64(i)}
			tt.set(&p, i)
			s.Points = append(s.Points, p)
		}
		got := map[Cost]float64{}
		runtimeCosts(s, Window{From: 0, To: 10}, got)
		want := map[Cost]float64{JVMHeapUsed: 105, JVMHeapCommit: 256, Metaspace: 40, Classes: 9000, JVMThreads: 30,
			GCTime: 10, GCCount: 60, JITTime: 2, JITCompiles: 180, JVMInit: 250}
		for c, w := range want {
			if g := got[c]; g < w-1e-9 || g > w+1e-9 {
				t.Errorf("%s: %s = %v, want %v", tt.name, c, g, w)
			}
		}
		if _, ok := got[MetaCommitted]; ok {
			t.Errorf("%s: metaspace committed, all 0, has a figure", tt.name)
		}
		if extra := maps.Collect(func(yield func(Cost, float64) bool) {
			for c, v := range got {
				if _, ok := want[c]; !ok && !yield(c, v) {
					return
				}
			}
		}); len(extra) > 0 {
			t.Errorf("%s: unexpected costs %v", tt.name, extra)
		}
	}
}
