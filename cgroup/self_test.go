package cgroup

import (
	"errors"
	"io/fs"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
	"golang.org/x/sys/unix"
)

// TestLiveIdleYieldsToJoined runs a busy service in an idle group on the
// CPU a thread of this process spins on, this process having joined the
// tree: the service gets what the thread leaves, next to nothing, where
// outside the tree it would take half (the kernel weighs an idle group
// against its siblings only). After Close the process is back in its own
// cgroup.
func TestLiveIdleYieldsToJoined(t *testing.T) {
	tree := liveTree(t)
	legacy, unified, err := cgroups.ParseCgroupFileUnified(selfCgroupPath)
	if err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	cpu := 0
	for !set.IsSet(cpu) {
		cpu++
	}
	g, err := tree.NewGroup("spare.svc", Limits{CPUs: strconv.Itoa(cpu)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetIdle(true); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no idle groups on this kernel (5.15+): %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	if err := tree.Join(); err != nil {
		t.Fatal(err)
	}
	startHelper(t, "busy", g.ProcsFiles())

	// Spin on cpu until this thread has run 300 ms, or for 5 s on a
	// machine too busy to give it that.
	done := make(chan [2]time.Duration)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Error(err)
		}
		own := func() time.Duration {
			var ts unix.Timespec
			_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
			return time.Duration(ts.Nano())
		}
		o0, s0 := own(), groupCPU(g)
		for end := time.Now().Add(5 * time.Second); own()-o0 < 300*time.Millisecond && time.Now().Before(end); {
		}
		done <- [2]time.Duration{own() - o0, groupCPU(g) - s0}
	}()
	ran := <-done
	if ran[0] < 50*time.Millisecond {
		t.Skipf("this thread ran %v in 5 s: too busy a machine to tell", ran[0])
	}
	t.Logf("on CPU %d: the joined thread ran %v, the idle group %v", cpu, ran[0], ran[1])
	if ran[1] > ran[0]/5 {
		t.Errorf("the idle group ran %v beside the joined thread's %v, want at most a fifth", ran[1], ran[0])
	}

	if err := tree.Close(); err != nil {
		t.Fatal(err)
	}
	legacy2, unified2, err := cgroups.ParseCgroupFileUnified(selfCgroupPath)
	if err != nil {
		t.Fatal(err)
	}
	if legacy2[ctrlCPU] != legacy[ctrlCPU] || unified2 != unified {
		t.Errorf("after Close this process is in cpu %q, unified %q; want %q, %q as before Join", legacy2[ctrlCPU], unified2, legacy[ctrlCPU], unified)
	}
}

// groupCPU is the group's CPU, 0 where it cannot be read (the
// caller then fails on what it compares).
func groupCPU(g *Group) time.Duration {
	s, err := g.Stat()
	if err != nil {
		return 0
	}
	return s.CPU
}
