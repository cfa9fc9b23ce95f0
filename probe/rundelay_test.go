package probe_test

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/probe"
)

// A process whose threads compete for one CPU waits to run, and RunDelay
// sees it.
func TestRunDelay(t *testing.T) {
	self := os.Getpid()
	before, err := probe.RunDelay(self)
	if err != nil {
		t.Fatal(err)
	}
	// Two busy goroutines on one locked CPU: each waits while the other
	// runs, for about half the 200 ms.
	cpus := unix.CPUSet{}
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		t.Skipf("affinity: %v", err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			one := unix.CPUSet{}
			for c := range 1024 {
				if cpus.IsSet(c) {
					one.Set(c)
					break
				}
			}
			if err := unix.SchedSetaffinity(0, &one); err != nil {
				t.Errorf("pin: %v", err)
				return
			}
			defer unix.SchedSetaffinity(0, &cpus)
			for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
			}
		})
	}
	wg.Wait()
	after, err := probe.RunDelay(self)
	if err != nil {
		t.Fatal(err)
	}
	if d := after - before; d < 30*time.Millisecond {
		t.Errorf("run delay grew %v while two threads shared one CPU for 200 ms; want about 100 ms", d)
	}
	if _, err := probe.RunDelay(1 << 30); err == nil {
		t.Error("RunDelay of a pid that does not exist: no error")
	}
}
