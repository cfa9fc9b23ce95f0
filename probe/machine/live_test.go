package machine

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLiveBusyCPU spins on CPU 0 for half a second and checks the sampler
// sees CPU 0 mostly busy. Other load only makes it busier.
func TestLiveBusyCPU(t *testing.T) {
	s, err := NewSampler()
	if err != nil {
		t.Fatal(err)
	}
	// Pin this goroutine's thread to CPU 0, and give the thread its
	// affinity back before other goroutines may run on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var was, cpu0 unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Skip("cannot read CPU affinity: ", err)
	}
	if !was.IsSet(0) {
		t.Skip("CPU 0 is not in this process's CPU set")
	}
	cpu0.Set(0)
	if err := unix.SchedSetaffinity(0, &cpu0); err != nil {
		t.Skip("cannot pin to CPU 0: ", err)
	}
	defer func() {
		if err := unix.SchedSetaffinity(0, &was); err != nil {
			t.Errorf("restore CPU affinity: %v", err)
		}
	}()

	a, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
	}
	b, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	u := Between(a, b)
	if len(u.PerCPU) == 0 {
		t.Fatal("no per-CPU figures")
	}
	t.Logf("CPU 0 busy %.2f (steal %.2f), all CPUs %.2f, memory used %.2f", u.PerCPU[0], u.PerCPUSteal[0], u.CPU, u.MemUsed)
	if u.PerCPU[0] < 0.5 {
		t.Errorf("CPU 0 busy %.2f while spinning on it", u.PerCPU[0])
	}
	if u.CPU <= 0 || u.CPU > 1 || u.MemUsed <= 0 || u.MemUsed >= 1 {
		t.Errorf("implausible usage %+v", u)
	}
	if d := b.Time.Sub(a.Time); d < 500*time.Millisecond {
		t.Errorf("samples %v apart", d)
	}
}
