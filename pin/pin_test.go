package pin

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want CPUs
		str  string
		bad  bool
	}{
		{in: "0", want: CPUs{0}, str: "0"},
		{in: "1-3", want: CPUs{1, 2, 3}, str: "1-3"},
		{in: "0,2-3,7", want: CPUs{0, 2, 3, 7}, str: "0,2-3,7"},
		{in: "3-1", bad: true},
		{in: "a", bad: true},
		{in: "1,,2", bad: true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("Parse(%q) accepted", tt.in)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) || got.String() != tt.str {
			t.Errorf("Parse(%q) = %v %q %v", tt.in, got, got.String(), err)
		}
	}
}

func TestProcessPinsAllThreads(t *testing.T) {
	online, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	one := CPUs{online[len(online)-1]}
	defer online.Process(os.Getpid())
	if err := one.Process(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	got, err := Online()
	if err != nil || !reflect.DeepEqual(got, one) {
		t.Errorf("after pinning to %v the thread runs on %v (%v)", one, got, err)
	}
}

// TestIdle puts a child process under SCHED_IDLE and reads the policy back
// from /proc, for every one of its threads.
func TestIdle(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	if err := Idle(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			t.Fatal(err)
		}
		if attr.Policy != unix.SCHED_IDLE {
			t.Errorf("thread %d: policy %d, want SCHED_IDLE (%d)", tid, attr.Policy, unix.SCHED_IDLE)
		}
	}
	if err := Idle(1 << 30); err == nil {
		t.Error("Idle of a process that does not exist succeeded")
	}
}

// TestSetPolicies saves a child's policy and nice value, puts it at idle
// priority and sets it back.
func TestSetPolicies(t *testing.T) {
	cmd := exec.Command("nice", "-n", "3", "sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skipf("no nice or sleep: %v", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	pid := cmd.Process.Pid
	policy := func() (uint32, int32) {
		t.Helper()
		a, err := unix.SchedGetAttr(pid, 0)
		if err != nil {
			t.Fatal(err)
		}
		return a.Policy, a.Nice
	}
	// nice execs sleep: wait until the process is niced.
	for i := 0; i < 100; i++ {
		if _, n := policy(); n == 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	saved, err := Policies(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := Idle(pid); err != nil {
		t.Fatal(err)
	}
	if p, _ := policy(); p != unix.SCHED_IDLE {
		t.Fatalf("policy %d after Idle, want SCHED_IDLE", p)
	}
	if err := SetPolicies(pid, saved, unix.SchedAttr{}); err != nil {
		t.Fatal(err)
	}
	if p, n := policy(); p != unix.SCHED_NORMAL || n != 3 {
		t.Errorf("policy %d nice %d after SetPolicies, want SCHED_NORMAL (0) nice 3", p, n)
	}
}
