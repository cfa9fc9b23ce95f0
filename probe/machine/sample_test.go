package machine

import (
	"math"
	"testing"
)

// TestSampleFixture reads /proc/stat and /proc/meminfo captured on a
// 2-CPU VM (USER_HZ 100: 177761 ticks are 1777.61 s).
func TestSampleFixture(t *testing.T) {
	s, err := NewSamplerAt("testdata/proc")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	want := CPUTimes{User: 1777.61, Nice: 3.96, System: 398.75, Idle: 19126.06, IOWait: 21.06, SoftIRQ: 48.15, Steal: 7.85}
	if !near(got.Total, want) {
		t.Errorf("total %+v, want %+v", got.Total, want)
	}
	if len(got.PerCPU) != 2 {
		t.Fatalf("%d CPUs, want 2", len(got.PerCPU))
	}
	cpu1 := CPUTimes{User: 1160.82, Nice: 2.31, System: 230.96, Idle: 9283.20, IOWait: 17.16, SoftIRQ: 30.91, Steal: 3.39}
	if !near(got.PerCPU[1], cpu1) {
		t.Errorf("CPU 1 %+v, want %+v", got.PerCPU[1], cpu1)
	}
	if got.MemTotal != 24684084*1024 || got.MemAvailable != 24237568*1024 {
		t.Errorf("memory total %d available %d", got.MemTotal, got.MemAvailable)
	}
	if got.Time.IsZero() {
		t.Error("no sample time")
	}
}

// TestSampleOfflineCPU reads a fixture where CPU 1 is offline and the
// kernel predates MemAvailable.
func TestSampleOfflineCPU(t *testing.T) {
	s, err := NewSamplerAt("testdata/offline-cpu/proc")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.PerCPU) != 3 || got.PerCPU[1] != (CPUTimes{}) || got.PerCPU[2].User != 2 {
		t.Errorf("per CPU %+v, want CPUs 0 and 2 at their index, 1 zero", got.PerCPU)
	}
	if got.MemAvailable != 100*1024 || math.Abs(got.MemUsed()-0.9) > 1e-9 {
		t.Errorf("available %d, used %g; want MemFree (100 kB), 0.9", got.MemAvailable, got.MemUsed())
	}
}

func TestSampleMissingProc(t *testing.T) {
	s, err := NewSamplerAt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sample(); err == nil {
		t.Error("sampled an empty directory")
	}
}

func near(a, b CPUTimes) bool {
	x := []float64{a.User, a.Nice, a.System, a.Idle, a.IOWait, a.IRQ, a.SoftIRQ, a.Steal}
	y := []float64{b.User, b.Nice, b.System, b.Idle, b.IOWait, b.IRQ, b.SoftIRQ, b.Steal}
	for i := range x {
		if math.Abs(x[i]-y[i]) > 1e-6 {
			return false
		}
	}
	return true
}
