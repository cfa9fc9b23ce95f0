package probe_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/probe"
)

// Holders names the processes that ran on the CPUs asked about, most CPU
// first, each counted where its task last ran.
func TestHolders(t *testing.T) {
	ms := time.Millisecond
	before := probe.TaskTimes{
		10: {PID: 10, Comm: "kdamond.0", Kernel: true, CPU: 100 * ms, Last: 0},
		20: {PID: 20, Comm: "java", CPU: 50 * ms, Last: 1},
		21: {PID: 20, Comm: "java", CPU: 10 * ms, Last: 0},
		22: {PID: 20, Comm: "java", CPU: 10 * ms, Last: 0},
		30: {PID: 30, Comm: "sshd", CPU: 5 * ms, Last: 0},
		40: {PID: 40, Comm: "idle", CPU: 5 * ms, Last: 0},
	}
	after := probe.TaskTimes{
		10: {PID: 10, Comm: "kdamond.0", Kernel: true, CPU: 180 * ms, Last: 0}, // 80 ms on CPU 0
		20: {PID: 20, Comm: "java", CPU: 150 * ms, Last: 1},                    // on CPU 1: not asked
		21: {PID: 20, Comm: "java", CPU: 15 * ms, Last: 0},                     // 5 ms
		22: {PID: 20, Comm: "java", CPU: 14 * ms, Last: 0},                     // and 4 more, same process
		30: {PID: 30, Comm: "sshd", CPU: 5*ms + 500*time.Microsecond, Last: 0}, // below least
		40: {PID: 40, Comm: "idle", CPU: 5 * ms, Last: 0},                      // did not run
		50: {PID: 50, Comm: "new", CPU: 30 * ms, Last: 0},                      // not in before
	}
	got := probe.Holders(before, after, []int{0}, ms)
	want := []probe.Holder{
		{Name: "kdamond.0", PID: 10, Kernel: true, CPU: 80 * ms},
		{Name: "java", PID: 20, CPU: 9 * ms},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Holders = %+v, want %+v", got, want)
	}
	if got := probe.Holders(before, after, []int{0, 1}, ms); len(got) != 2 || got[0].Name != "java" || got[0].CPU != 109*ms {
		t.Errorf("Holders on CPUs 0-1 = %+v, want java's 109 ms first", got)
	}
}

// A thread of this process that runs on one CPU is read as holding it, and
// a process skipped is not read.
func TestReadTaskTimes(t *testing.T) {
	cpus := unix.CPUSet{}
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		t.Skipf("affinity: %v", err)
	}
	cpu := -1
	for c := range 1024 {
		if cpus.IsSet(c) {
			cpu = c
			break
		}
	}
	self := os.Getpid()
	before, err := probe.ReadTaskTimes(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if kt, ok := before[2]; ok && kt.Comm == "kthreadd" && !kt.Kernel {
		t.Errorf("kthreadd (pid 2) read as %+v, want a kernel thread", kt)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		one := unix.CPUSet{}
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Errorf("pin: %v", err)
			return
		}
		defer unix.SchedSetaffinity(0, &cpus)
		// Spin until this thread has run 100 ms, however long a busy
		// machine takes to give it that (a wall-clock 100 ms gave it 44
		// ms at load 20), within a bound.
		ran := func() time.Duration {
			var ts unix.Timespec
			unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) // zero if it fails: the test then fails below
			return time.Duration(ts.Nano())
		}
		for from, end := ran(), time.Now().Add(20*time.Second); ran()-from < 100*time.Millisecond; {
			if time.Now().After(end) {
				t.Errorf("this thread ran only %v in 20 s", ran()-from)
				return
			}
		}
		// Read while pinned, so that this thread's last CPU is cpu.
		after, err := probe.ReadTaskTimes(context.Background(), nil)
		if err != nil {
			t.Error(err)
			return
		}
		var mine *probe.Holder
		hs := probe.Holders(before, after, []int{cpu}, time.Millisecond)
		for i := range hs {
			if hs[i].PID == self {
				mine = &hs[i]
			}
		}
		if mine == nil || mine.CPU < 50*time.Millisecond || mine.Kernel {
			t.Errorf("holders of CPU %d = %+v, want this process (%d) with about 100 ms, not a kernel thread", cpu, hs, self)
		}
		skipped, err := probe.ReadTaskTimes(context.Background(), func(pid, _ int) bool { return pid == self })
		if err != nil {
			t.Error(err)
			return
		}
		for tid, tt := range skipped {
			if tt.PID == self {
				t.Errorf("task %d of the skipped process was read", tid)
			}
		}
	}()
	<-done
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := probe.ReadTaskTimes(ctx, nil); err == nil {
		t.Error("a reading past its context's end: no error")
	}
}
