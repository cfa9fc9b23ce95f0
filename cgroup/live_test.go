package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// The live tests re-execute the test binary as a helper process that joins
// a group with Enter and then burns CPU for a bounded time.
const (
	helperEnv   = "TOLL_CGROUP_TEST_HELPER" // "busy" or "fork"
	procsEnv    = "TOLL_CGROUP_TEST_PROCS"  // cgroup.procs files, one per line
	helperLimit = 8 * time.Second           // a helper never outlives this
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

// runHelper is the helper process: Enter, report "ready", burn CPU.
func runHelper(mode string) int {
	if procs := os.Getenv(procsEnv); procs != "" {
		if err := Enter(strings.Split(procs, "\n")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	switch mode {
	case "busy":
		fmt.Println("ready")
		spin(helperLimit)
	case "idle":
		fmt.Println("ready")
		time.Sleep(helperLimit)
	case "fork":
		// Start a grandchild that inherits the group without calling
		// Enter, and stay idle ourselves.
		c, pid, err := startProc(helperCmd("busy", nil))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Println("ready", pid)
		_ = c.Wait()
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	return 0
}

func spin(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
	}
}

func helperCmd(mode string, procs []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, procsEnv+"="+strings.Join(procs, "\n"))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// startProc starts cmd and waits for its "ready [pid]" line; it returns the
// pid in that line, or the process's own pid.
func startProc(cmd *exec.Cmd) (*exec.Cmd, int, error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case s := <-line:
		f := strings.Fields(s)
		if len(f) == 0 || f[0] != "ready" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, 0, fmt.Errorf("helper did not get ready: %q", s)
		}
		pid := cmd.Process.Pid
		if len(f) > 1 {
			if pid, err = strconv.Atoi(f[1]); err != nil {
				return nil, 0, err
			}
		}
		return cmd, pid, nil
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, 0, errors.New("helper did not get ready within 5s")
	}
}

// startHelper starts a helper that joins procs; it is killed and reaped at
// the end of the test.
func startHelper(t *testing.T, mode string, procs []string) (*exec.Cmd, int) {
	t.Helper()
	cmd, pid, err := startProc(helperCmd(mode, procs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, pid
}

// requireRoot skips tests that need to create cgroups.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
}

// treeName is unique per test and process.
func treeName(t *testing.T) string {
	return fmt.Sprintf("test-%d-%s", os.Getpid(), strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
}

// liveTree creates a tree in the layout Detect picks, or skips.
func liveTree(t *testing.T) *Tree {
	t.Helper()
	requireRoot(t)
	l, err := probe()
	if err != nil {
		t.Skipf("no usable cgroups here: %v", err)
	}
	return newTestTree(t, l)
}

// newTestTree creates a tree in layout l that is closed, and checked to be
// gone, at the end of the test.
func newTestTree(t *testing.T, l layout) *Tree {
	t.Helper()
	tree, err := newTree(l, treeName(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tree.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, d := range tree.dirs {
			if exists(d) {
				t.Errorf("%s still exists after Close", d)
			}
		}
	})
	return tree
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func mustStat(t *testing.T, g *Group) Stat {
	t.Helper()
	s, err := g.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkEmpty fails unless the group has no processes.
func checkEmpty(t *testing.T, g *Group) {
	t.Helper()
	pids, err := g.Pids()
	if err != nil {
		t.Fatal(err)
	}
	if len(pids) > 0 {
		t.Fatalf("group %s still has processes %v", g.Path(), pids)
	}
}

// checkKilled fails unless cmd ended by SIGKILL, which also shows that Kill
// left the reaping to cmd's owner.
func checkKilled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("helper Wait = %v, want it killed", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper ended with %v, want SIGKILL", err)
	}
}

func TestDetectLive(t *testing.T) {
	v, err := Detect()
	if err != nil {
		if os.Geteuid() == 0 {
			t.Logf("Detect: %v (no usable cgroups on this machine)", err)
		}
		if !strings.Contains(err.Error(), "v1:") || !strings.Contains(err.Error(), "v2:") {
			t.Errorf("Detect error should explain both versions: %v", err)
		}
		return
	}
	if v != V1 && v != V2 {
		t.Fatalf("Detect = %v", v)
	}
	t.Logf("Detect = %v", v)
}

// testLimitsAndStat is the main live check, for a tree of either version.
func testLimitsAndStat(t *testing.T, tree *Tree) {
	const memLimit = 256 << 20
	g, err := tree.NewGroup("limited", Limits{CPUs: "0", CPULimit: 0.5, MemoryLimit: memLimit})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.NewGroup("limited", Limits{}); err == nil {
		t.Error("second NewGroup with the same name: want error")
	}

	// The limits are in the files.
	switch tree.Version() {
	case V1:
		for file, want := range map[string]string{
			filepath.Join(g.ctrl[idxCPU], "cpu.cfs_quota_us"):             "50000",
			filepath.Join(g.ctrl[idxCPU], "cpu.cfs_period_us"):            "100000",
			filepath.Join(g.ctrl[idxMemory], "memory.limit_in_bytes"):     strconv.Itoa(memLimit),
			filepath.Join(g.ctrl[idxCPUSet], "cpuset.cpus"):               "0",
			filepath.Join(g.ctrl[idxCPUSet], "cpuset.mems"):               readTrim(t, filepath.Join(filepath.Dir(g.ctrl[idxCPUSet]), "cpuset.mems")),
			filepath.Join(filepath.Dir(g.ctrl[idxCPUSet]), "cpuset.cpus"): readTrim(t, filepath.Join(tree.l.v1[idxCPUSet].dir, "cpuset.cpus")),
		} {
			if got := readTrim(t, file); got != want || got == "" {
				t.Errorf("%s = %q, want %q", file, got, want)
			}
		}
		if len(g.ProcsFiles()) < 3 || len(g.ProcsFiles()) > 4 {
			t.Errorf("ProcsFiles = %v, want one per distinct hierarchy", g.ProcsFiles())
		}
	case V2:
		q, p, err := parseV2CPUMax([]byte(readTrim(t, filepath.Join(g.path, "cpu.max"))))
		if err != nil || q != 50000 || p != 100000 {
			t.Errorf("cpu.max = %d %d (%v), want 50000 100000", q, p, err)
		}
		if got := readTrim(t, filepath.Join(g.path, "memory.max")); got != strconv.Itoa(memLimit) {
			t.Errorf("memory.max = %q", got)
		}
		if got := readTrim(t, filepath.Join(g.path, "cpuset.cpus")); got != "0" {
			t.Errorf("cpuset.cpus = %q", got)
		}
		if len(g.ProcsFiles()) != 1 {
			t.Errorf("ProcsFiles = %v, want one", g.ProcsFiles())
		}
	}
	for _, f := range g.ProcsFiles() {
		if strings.Contains(f, ",") {
			t.Errorf("procs file %s contains a comma", f)
		}
	}

	// A helper joins the group the way toll's shim does, and burns CPU.
	cmd, pid := startHelper(t, "busy", g.ProcsFiles())
	pids, err := g.Pids()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, pid) {
		t.Fatalf("Pids = %v, want %d in it", pids, pid)
	}
	s0, p0, t0 := mustStat(t, g), procCPU(t, pid), time.Now()
	time.Sleep(1500 * time.Millisecond)
	s1, p1, t1 := mustStat(t, g), procCPU(t, pid), time.Now()
	used, own, wall := s1.CPU-s0.CPU, p1-p0, t1.Sub(t0)
	t.Logf("used %v CPU in %v (%.2f cores; the helper's own /proc figure %v); throttled %d times for %v; memory %d peak %d limit %d; user %v system %v",
		used, wall, used.Seconds()/wall.Seconds(), own, s1.NrThrottled, s1.Throttled, s1.MemoryCurrent, s1.MemoryPeak, s1.MemoryLimit, s1.User, s1.System)
	// The group accounts what its process used, whatever else the machine
	// runs (a busy machine gives the helper less, never the group less
	// than the helper).
	if used < own*8/10 || own <= 0 {
		t.Errorf("CPU grew by %v in %v, the helper used %v by /proc: want the group to account it", used, wall, own)
	}
	if limit := time.Duration(0.6 * float64(wall)); used > limit {
		t.Errorf("CPU grew by %v in %v, more than 0.6 cores with CPULimit 0.5", used, wall)
	}
	// The quota throttles a helper that wants more than it; on a machine so
	// busy that the helper got less than 0.4 cores, it may never have
	// reached the quota.
	// The kernel adds a throttled period's time when the period ends, so a
	// group read while its first throttling lasts counts one throttling
	// and no time yet: from the second on, the first's time is in.
	if s1.NrThrottled == 0 || (s1.NrThrottled > 1 && s1.Throttled == 0) {
		if used >= wall*4/10 {
			t.Errorf("NrThrottled = %d, Throttled = %v; want > 0 with CPULimit 0.5", s1.NrThrottled, s1.Throttled)
		} else {
			t.Logf("not throttled, but the busy machine gave the helper only %v of %v: the quota was never reached", used, wall)
		}
	}
	if s1.User+s1.System == 0 {
		t.Error("User and System are 0")
	}
	if s1.MemoryLimit != memLimit {
		t.Errorf("MemoryLimit = %d, want %d", s1.MemoryLimit, memLimit)
	}
	if s1.MemoryCurrent == 0 {
		t.Error("MemoryCurrent = 0")
	}
	if s1.MemoryPeak != 0 && s1.MemoryPeak < s1.MemoryCurrent {
		t.Errorf("MemoryPeak %d < MemoryCurrent %d", s1.MemoryPeak, s1.MemoryCurrent)
	}
	allocs := testing.AllocsPerRun(20, func() { _, _ = g.Stat() })
	t.Logf("Stat allocates %v times per call", allocs)
	if allocs > 8 {
		t.Errorf("Stat allocates %v times per call, want it cheap", allocs)
	}

	// Kill empties the group without reaping the helper.
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	checkEmpty(t, g)
	checkKilled(t, cmd)
	if err := g.Kill(); err != nil {
		t.Errorf("Kill of an empty group: %v", err)
	}
	// Stat still works on the empty group and keeps the totals.
	if s2 := mustStat(t, g); s2.CPU < s1.CPU {
		t.Errorf("CPU after Kill %v < before %v", s2.CPU, s1.CPU)
	}

	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.dirs {
		if exists(d) {
			t.Errorf("%s still exists after Delete", d)
		}
	}
	if err := g.Delete(); err != nil {
		t.Errorf("second Delete: %v", err)
	}
	if _, err := g.Stat(); err == nil {
		t.Error("Stat of a deleted group: want error")
	}
}

func TestLiveLimitsAndStat(t *testing.T) {
	testLimitsAndStat(t, liveTree(t))
}

// TestLiveSetCPUs checks that SetCPUs moves a group's process onto the CPUs
// it adds and off those it takes away.
func TestLiveSetCPUs(t *testing.T) {
	testSetCPUs(t, liveTree(t))
}

func testSetCPUs(t *testing.T, tree *Tree) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var online []int
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			online = append(online, c)
		}
	}
	if len(online) < 2 {
		t.Skipf("one CPU (%v): nothing to widen a group to", online)
	}
	one := strconv.Itoa(online[1])
	all := fmt.Sprintf("%d,%d", online[0], online[1]) // as the kernel lists them
	if online[1] == online[0]+1 {
		all = fmt.Sprintf("%d-%d", online[0], online[1])
	}
	g, err := tree.NewGroup("widen", Limits{CPUs: one})
	if err != nil {
		t.Fatal(err)
	}
	_, pid := startHelper(t, "idle", g.ProcsFiles())
	allowed := func() string {
		t.Helper()
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				return strings.TrimSpace(v)
			}
		}
		t.Fatal("no Cpus_allowed_list in /proc/PID/status")
		return ""
	}
	if got := allowed(); got != one {
		t.Fatalf("in a group of CPU %s the helper may run on %s", one, got)
	}
	for _, cpus := range []string{all, one} {
		if err := g.SetCPUs(cpus); err != nil {
			t.Fatal(err)
		}
		if got := allowed(); got != cpus {
			t.Errorf("after SetCPUs(%s) the helper may run on %s", cpus, got)
		}
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveGrandchild checks that a process forked inside the group is in it
// and accounted.
func TestLiveGrandchild(t *testing.T) {
	tree := liveTree(t)
	g, err := tree.NewGroup("fork", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cmd, grandchild := startHelper(t, "fork", g.ProcsFiles())
	pids, err := g.Pids()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, cmd.Process.Pid) || !slices.Contains(pids, grandchild) {
		t.Fatalf("Pids = %v, want the helper %d and its child %d", pids, cmd.Process.Pid, grandchild)
	}
	s0, p0, t0 := mustStat(t, g), procCPU(t, grandchild), time.Now()
	time.Sleep(time.Second)
	s1, p1, t1 := mustStat(t, g), procCPU(t, grandchild), time.Now()
	used, own, wall := s1.CPU-s0.CPU, p1-p0, t1.Sub(t0)
	t.Logf("the group used %v CPU in %v; the grandchild %v by /proc", used, wall, own)
	if used < own*8/10 || own <= 0 {
		t.Errorf("CPU grew by %v in %v while the busy grandchild used %v; it is not accounted", used, wall, own)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	checkEmpty(t, g)
	checkKilled(t, cmd)
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveClose checks that Close kills what is left and removes everything,
// and that it is idempotent.
func TestLiveClose(t *testing.T) {
	tree := liveTree(t)
	a, err := tree.NewGroup("a", Limits{CPUs: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.NewGroup("b", Limits{MemoryLimit: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	cmd, _ := startHelper(t, "busy", a.ProcsFiles())
	if err := tree.Close(); err != nil {
		t.Fatal(err)
	}
	checkKilled(t, cmd)
	for _, d := range tree.dirs {
		if exists(d) {
			t.Errorf("%s still exists after Close", d)
		}
	}
	if err := tree.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := tree.NewGroup("c", Limits{}); err == nil {
		t.Error("NewGroup after Close: want error")
	}
}

// TestLiveNewTreeLeftover checks that an empty leftover tree of the same
// name is replaced and one in use is refused.
func TestLiveNewTreeLeftover(t *testing.T) {
	tree := liveTree(t)
	g, err := tree.NewGroup("x", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newTree(tree.l, tree.name); err != nil {
		t.Fatalf("leftover empty tree: %v", err)
	}
	g, err = tree.NewGroup("y", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	startHelper(t, "busy", g.ProcsFiles())
	if _, err := newTree(tree.l, tree.name); err == nil {
		t.Fatal("tree in use: want error")
	}
}

// v2Mount finds a cgroup2 mount to test against: /sys/fs/cgroup on a v2
// host, the hybrid /sys/fs/cgroup/unified, or a fresh mount.
func v2Mount(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(mountinfoPath)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := parseMountinfo(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.fstype == "cgroup2" && !e.readOnly && checkWritable(e.mountpoint) == nil {
			return e.mountpoint
		}
	}
	dir := t.TempDir()
	if err := unix.Mount("none", dir, "cgroup2", 0, ""); err != nil {
		t.Skipf("no cgroup2 mount and can't mount one: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

func v2Available(t *testing.T, mount string) []string {
	t.Helper()
	have := strings.Fields(readTrim(t, filepath.Join(mount, "cgroup.controllers")))
	var out []string
	for _, c := range v2Controllers() {
		if slices.Contains(have, c) {
			out = append(out, c)
		}
	}
	return out
}

// TestLiveV2 runs the main live check on cgroup v2 with controllers.
func TestLiveV2(t *testing.T) {
	requireRoot(t)
	if v, err := Detect(); err == nil && v == V2 {
		t.Skip("Detect picks v2 here, so TestLiveLimitsAndStat covers it")
	}
	mount := v2Mount(t)
	if got := v2Available(t, mount); len(got) < len(v2Controllers()) {
		t.Skipf("the cgroup2 hierarchy at %s has controllers %q of cpu, cpuset, memory: the others are bound to v1 hierarchies on this host, so v2 limits can't be tested here (TestLiveV2Bare covers the v2 code that needs no controllers)", mount, got)
	}
	tree := newTestTree(t, layout{version: V2, mount: mount, controllers: v2Controllers()})
	testLimitsAndStat(t, tree)
	testSetCPUs(t, tree)
}

// TestLiveV2Bare runs the v2 code paths that need no controllers (create,
// Enter, cpu.stat usage, cgroup.kill, delete) on whatever cgroup2 hierarchy
// this host has, even one without controllers.
func TestLiveV2Bare(t *testing.T) {
	requireRoot(t)
	mount := v2Mount(t)
	tree := newTestTree(t, layout{version: V2, mount: mount, controllers: v2Available(t, mount)})
	g, err := tree.NewGroup("bare", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.ProcsFiles()) != 1 || g.Path() != filepath.Join(mount, tollDir, tree.name, "bare") {
		t.Errorf("Path = %s, ProcsFiles = %v", g.Path(), g.ProcsFiles())
	}
	cmd, pid := startHelper(t, "fork", g.ProcsFiles())
	pids, err := g.Pids()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids, cmd.Process.Pid) || !slices.Contains(pids, pid) {
		t.Fatalf("Pids = %v, want %d and %d", pids, cmd.Process.Pid, pid)
	}
	// Until the grandchild, which spins, has run 100 ms by its threads'
	// schedstat, however long a busy machine takes to give it that (500
	// ms gave it 89 ms at load 16): the group's CPU grew at least as much.
	// Every thread counts: the Go runtime may move the spinning goroutine
	// off the main thread. A thread keeps its last reading once it ends.
	latest := map[int]time.Duration{}
	ran := func() time.Duration {
		if threads, err := procfs.AllThreads(pid); err == nil {
			for _, th := range threads {
				if ss, err := th.Schedstat(); err == nil {
					latest[th.PID] = time.Duration(ss.RunningNanoseconds)
				}
			}
		}
		var sum time.Duration
		for _, d := range latest {
			sum += d
		}
		return sum
	}
	s0, r0 := mustStat(t, g), ran()
	for end := time.Now().Add(20 * time.Second); ran()-r0 < 100*time.Millisecond && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	r1, s1 := ran(), mustStat(t, g)
	if r1-r0 < 100*time.Millisecond {
		t.Fatalf("the grandchild (pid %d) ran %v in 20 s", pid, r1-r0)
	}
	if s1.CPU-s0.CPU < r1-r0-time.Millisecond {
		t.Errorf("CPU grew by %v while the grandchild ran %v, want the grandchild accounted", s1.CPU-s0.CPU, r1-r0)
	}
	if !exists(filepath.Join(g.path, "cgroup.kill")) {
		t.Log("no cgroup.kill (kernel < 5.14): testing the pid loop")
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	checkEmpty(t, g)
	checkKilled(t, cmd)
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	if exists(g.path) {
		t.Errorf("%s still exists after Delete", g.path)
	}
}

// TestRemoveStale leaves a tree behind as a killed run would, with a process
// in it, and checks RemoveStale kills it and removes the tree while sparing
// trees still in use.
func TestRemoveStale(t *testing.T) {
	if _, err := Detect(); err != nil {
		t.Skipf("no usable cgroups: %v", err)
	}
	stale, err := NewTree(fmt.Sprintf("stale-test-%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	keep, err := NewTree(fmt.Sprintf("keep-test-%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stale.Close(); keep.Close() })
	g, err := stale.NewGroup("svc", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for _, f := range g.ProcsFiles() {
		if err := writeString(f, fmt.Sprint(cmd.Process.Pid)); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStale(func(name string) bool { return name != stale.name })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(removed, stale.name) || slices.Contains(removed, keep.name) {
		t.Errorf("removed %v", removed)
	}
	if err := cmd.Wait(); err == nil {
		t.Error("the process in the stale tree was not killed")
	}
	for _, d := range stale.dirs {
		if exists(d) {
			t.Errorf("%s still exists", d)
		}
	}
	for _, d := range keep.dirs {
		if !exists(d) {
			t.Errorf("%s was removed but is in use", d)
		}
	}
}

// privateNSEnv marks a test process re-run in a private mount namespace.
const privateNSEnv = "TOLL_TEST_PRIVATE_MOUNTS"

// TestPerfEventJoin mounts the v1 perf_event controller (in a mount
// namespace of its own, so no other process sees it) and checks that a
// group gets a directory there, that a process joining the group joins it
// too, and that Close removes it.
func TestPerfEventJoin(t *testing.T) {
	v, err := Detect()
	if err != nil || v != V1 {
		t.Skipf("needs usable cgroup v1 (got %v, %v)", v, err)
	}
	if os.Getenv(privateNSEnv) == "" {
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Skip("no unshare(1): ", err)
		}
		self, _ := os.Executable()
		cmd := exec.Command(unshare, "--mount", "--propagation", "private", self, "-test.run", "^TestPerfEventJoin$", "-test.v")
		cmd.Env = append(os.Environ(), privateNSEnv+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("in a private mount namespace:\n%s", out)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if l, err := probe(); err == nil && l.perfEvent == "" {
		dir := t.TempDir()
		if err := syscall.Mount("none", dir, "cgroup", 0, "perf_event"); err != nil {
			t.Skip("cannot mount perf_event: ", err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	}
	tree, err := NewTree(fmt.Sprintf("perf-test-%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	if !tree.PerfEvent() {
		t.Fatal("tree does not use the perf_event hierarchy")
	}
	g, err := tree.NewGroup("svc", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pd := g.PerfEventDir()
	if pd == "" || !exists(pd) || !slices.Contains(g.ProcsFiles(), filepath.Join(pd, "cgroup.procs")) {
		t.Fatalf("perf_event dir %q, procs files %v", pd, g.ProcsFiles())
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for _, f := range g.ProcsFiles() {
		if err := writeString(f, strconv.Itoa(cmd.Process.Pid)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(pd, "cgroup.procs"))
	if !strings.Contains(string(b), strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("pid %d not in %s: %q", cmd.Process.Pid, pd, b)
	}
	if err := tree.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(pd) {
		t.Errorf("%s left after Close", pd)
	}
}

// procCPU returns the user and system CPU time process pid has used, from
// /proc/PID/stat (in clock ticks of 100 Hz, as Linux reports them).
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	// After the command: state is field 3 of the whole line, utime 14 and
	// stime 15, so 0, 11 and 12 here.
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
