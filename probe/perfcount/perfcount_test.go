package perfcount

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseRead(t *testing.T) {
	enc := func(v, en, run uint64) []byte {
		b := make([]byte, 24)
		binary.NativeEndian.PutUint64(b, v)
		binary.NativeEndian.PutUint64(b[8:], en)
		binary.NativeEndian.PutUint64(b[16:], run)
		return b
	}
	tests := []struct {
		name string
		b    []byte
		want uint64
		err  bool
	}{
		{"always running", enc(1000, 50, 50), 1000, false},
		{"multiplexed half the time", enc(1000, 100, 50), 2000, false},
		{"never ran", enc(0, 100, 0), 0, false},
		{"short read", make([]byte, 8), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseRead(tt.b)
			if (err != nil) != tt.err || c.Value != tt.want {
				t.Errorf("got %+v, %v", c, err)
			}
		})
	}
}

// TestAvailableSaysWhy checks that Available either works or gives a
// reason a user can act on.
func TestAvailableSaysWhy(t *testing.T) {
	err := Available()
	t.Logf("hardware counters: %v", err)
	if err != nil && len(err.Error()) < 20 {
		t.Errorf("reason too terse: %v", err)
	}
}

// TestCgroupCounting counts the task clock of a busy process in a perf_event
// cgroup of its own (a software event, so it runs on machines without
// hardware counters), and checks an idle cgroup counts nothing.
func TestCgroupCounting(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a perf_event cgroup")
	}
	if os.Getenv(privateNSEnv) == "" {
		inPrivateMountNS(t, "TestCgroupCounting")
		return
	}
	root := perfEventRoot(t)
	busy, idle := filepath.Join(root, fmt.Sprintf("toll-test-%d", os.Getpid())), filepath.Join(root, fmt.Sprintf("toll-idle-%d", os.Getpid()))
	for _, d := range []string{busy, idle} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Rmdir(d) })
	}
	cpus := []int{}
	for i := 0; i < 64; i++ {
		if _, err := os.Stat(fmt.Sprintf("/sys/devices/system/cpu/cpu%d", i)); err == nil {
			cpus = append(cpus, i)
		}
	}
	gb, err := OpenCgroup(busy, cpus, TaskClock)
	if err != nil {
		t.Fatal(err)
	}
	defer gb.Close()
	gi, err := OpenCgroup(idle, cpus, TaskClock)
	if err != nil {
		t.Fatal(err)
	}
	defer gi.Close()
	cmd := exec.Command("sh", "-c", "read x; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	in, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	in.Write([]byte("go\n"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("busy loop did not end")
	}
	cb, err := gb.Read()
	if err != nil {
		t.Fatal(err)
	}
	ci, err := gi.Read()
	if err != nil {
		t.Fatal(err)
	}
	if cb[0].Value < uint64(10*time.Millisecond) || ci[0].Value != 0 {
		t.Errorf("task clock: busy cgroup %v, idle cgroup %v", time.Duration(cb[0].Value), time.Duration(ci[0].Value))
	}
}

// perfEventRoot returns where the perf_event hierarchy is mounted, mounting
// a v1 one for the test when none is.
func perfEventRoot(t *testing.T) string {
	var st unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return "/sys/fs/cgroup"
	}
	if _, err := os.Stat("/sys/fs/cgroup/perf_event/cgroup.procs"); err == nil {
		return "/sys/fs/cgroup/perf_event"
	}
	dir := t.TempDir()
	if err := unix.Mount("none", dir, "cgroup", 0, "perf_event"); err != nil {
		t.Skip("no perf_event cgroup hierarchy and cannot mount one: ", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// privateNSEnv marks a test process re-run in a private mount namespace.
const privateNSEnv = "TOLL_TEST_PRIVATE_MOUNTS"

// inPrivateMountNS re-runs test name in a mount namespace of its own, so the
// perf_event hierarchy it may mount is seen by no other process (a toll run
// by another package's tests would otherwise pick it up).
func inPrivateMountNS(t *testing.T, name string) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1) to get a private mount namespace: ", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", self, "-test.run", "^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), privateNSEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in a private mount namespace:\n%s", out)
	if err != nil {
		t.Fatalf("%s failed: %v", name, err)
	}
}
