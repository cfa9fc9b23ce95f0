package leftover

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/runid"
)

// deadRun returns the ID of a run whose toll is gone: a process that has
// exited.
func deadRun(t *testing.T) runid.ID {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	self, err := runid.Self()
	if err != nil {
		t.Fatal(err)
	}
	id := runid.ID{Pid: cmd.Process.Pid, Start: self.Start}
	if id.Alive() {
		t.Fatalf("%v is alive", id)
	}
	return id
}

// sleeper starts `sleep 60` with env added, and returns it; the test kills
// it in the end.
func sleeper(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	// The environment is in place a moment after exec begins.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ"); len(b) > 0 {
			break
		}
	}
	return cmd
}

// exited reports whether cmd's process exits within 5 s.
func exited(cmd *exec.Cmd) bool {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return true
		}
	}
	return false
}

// running reports whether cmd's process runs (exists and is no zombie).
func running(cmd *exec.Cmd) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

func pidsOf(rs []Removed) []string {
	var out []string
	for _, r := range rs {
		out = append(out, strings.Fields(r.What)[0])
	}
	return out
}

// TestProcessesKillsOnlyDeadRuns labels one process with a run that is gone,
// one with a live run (the test) and leaves one unlabelled: only the first
// may be killed.
func TestProcessesKillsOnlyDeadRuns(t *testing.T) {
	self, err := runid.Self()
	if err != nil {
		t.Fatal(err)
	}
	dead := deadRun(t)
	stale := sleeper(t, dead.Env())
	live := sleeper(t, self.Env())
	plain := sleeper(t)
	removed, err := Processes{}.Clean(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pidsOf(removed), strconv.Itoa(stale.Process.Pid)) {
		t.Errorf("removed %v, want the process of the dead run, %d", removed, stale.Process.Pid)
	}
	if !exited(stale) {
		t.Errorf("the process of the dead run %v is still alive", dead)
	}
	for _, c := range []*exec.Cmd{live, plain} {
		if slices.Contains(pidsOf(removed), strconv.Itoa(c.Process.Pid)) || !running(c) {
			t.Errorf("killed %d, which is not of a dead run", c.Process.Pid)
		}
	}
	for _, r := range removed {
		if r.Kind != "process" || !strings.Contains(r.String(), "of run ") {
			t.Errorf("removed %q: want a process of a run", r)
		}
	}
}

// TestKillRun kills the processes of one run and no other.
func TestKillRun(t *testing.T) {
	dead := deadRun(t)
	mine := runid.ID{Pid: dead.Pid, Start: dead.Start + 7} // another run, gone too
	a := sleeper(t, dead.Env())
	b := sleeper(t, mine.Env())
	removed, err := KillRun(context.Background(), mine)
	if err != nil {
		t.Fatal(err)
	}
	if got := pidsOf(removed); !slices.Equal(got, []string{strconv.Itoa(b.Process.Pid)}) {
		t.Errorf("KillRun removed %v, want only %d", removed, b.Process.Pid)
	}
	if !exited(b) {
		t.Error("the run's process is still alive")
	}
	if !running(a) {
		t.Error("the other run's process was killed")
	}
}

// TestCgroupsRemovesDeadRunsTrees leaves a cgroup tree of a dead run, with
// a process in it, and one of the live test: only the first may go.
func TestCgroupsRemovesDeadRunsTrees(t *testing.T) {
	if _, err := cgroup.Detect(); err != nil {
		t.Skip("no usable cgroups:", err)
	}
	self, err := runid.Self()
	if err != nil {
		t.Fatal(err)
	}
	dead := deadRun(t)
	staleTree, err := cgroup.NewTree(runid.TreeName("leftover-test", dead))
	if err != nil {
		t.Skip("cannot create a cgroup tree:", err)
	}
	defer staleTree.Close()
	liveTree, err := cgroup.NewTree(runid.TreeName("leftover-test", self))
	if err != nil {
		t.Fatal(err)
	}
	defer liveTree.Close()
	g, err := staleTree.NewGroup("svc", cgroup.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sl := sleeper(t)
	for _, f := range g.ProcsFiles() {
		if err := os.WriteFile(f, []byte(strconv.Itoa(sl.Process.Pid)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := Cgroups{}.Clean(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Removed{Kind: "cgroup", What: runid.TreeName("leftover-test", dead)}
	if !slices.Contains(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	if slices.Contains(removed, Removed{Kind: "cgroup", What: runid.TreeName("leftover-test", self)}) {
		t.Errorf("removed the tree of the live test")
	}
	if !exited(sl) {
		t.Error("the process in the dead run's tree is still alive")
	}
	if _, err := liveTree.NewGroup("still-here", cgroup.Limits{}); err != nil {
		t.Errorf("the live tree is gone: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		in   []Removed
		want string
	}{
		{nil, ""},
		{[]Removed{{"cgroup", "q-1@2"}}, "1 cgroup (q-1@2)"},
		{[]Removed{{"process", "1 (a) of run 9@9"}, {"cgroup", "q-9@9"}, {"process", "2 (b) of run 9@9"}},
			"2 processes (1 (a) of run 9@9, 2 (b) of run 9@9), 1 cgroup (q-9@9)"},
		{[]Removed{{"process", "1"}, {"process", "2"}, {"process", "3"}, {"process", "4"}}, "4 processes (1, 2, 3, …)"},
	}
	for _, tt := range tests {
		if got := Describe(tt.in); got != tt.want {
			t.Errorf("Describe(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSinkCountsRemovesOnlyDeadRuns checks that the counts files of the
// sinks of runs that are gone are removed, named by the pattern toll run
// creates them with, and that those of a live run, an older toll's file a
// process still maps, and other files are left.
func TestSinkCountsRemovesOnlyDeadRuns(t *testing.T) {
	self, err := runid.Self()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	create := func(pattern string) string {
		t.Helper()
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(64); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return f.Name()
	}
	dead := create(SinkCountsPattern(deadRun(t)))
	live := create(SinkCountsPattern(self))
	legacy := create("toll-sink-*.counts")
	legacyMapped := create("toll-sink-*.counts")
	other := create("toll-sink-*.log")
	f, err := os.OpenFile(legacyMapped, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, 64, unix.PROT_READ, unix.MAP_SHARED)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)

	removed, err := SinkCounts{Dir: dir}.Clean(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range removed {
		got = append(got, r.What)
		if r.Kind != "sink counts file" {
			t.Errorf("removed %q: want a sink counts file", r)
		}
	}
	if len(got) != 2 {
		t.Errorf("removed %q, want %s and %s", got, dead, legacy)
	}
	for _, p := range []string{dead, legacy} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left: %v", p, err)
		}
	}
	for _, p := range []string{live, legacyMapped, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s, not of a dead run, was removed: %v", p, err)
		}
	}
	if !slices.Contains(Cleaners(), Cleaner(SinkCounts{Dir: os.TempDir()})) {
		t.Errorf("Cleaners() = %v: toll cleanup does not remove sink counts files", Cleaners())
	}
}

// FuzzSinkCountsOwner feeds the counts file cleaner arbitrary file names:
// one it takes for a labelled run's has a run that parses, and a name
// made by SinkCountsPattern is always read back as its run.
func FuzzSinkCountsOwner(f *testing.F) {
	for _, s := range []string{"toll-sink-999@8812-123.counts", "toll-sink-123.counts", "toll-sink-.counts", "toll-sink-1@2-.counts", "toll-sink-x@y-1.counts", "other.counts"} {
		f.Add(s, 999, uint64(8812))
	}
	f.Fuzz(func(t *testing.T, name string, pid int, start uint64) {
		if id, labelled, ok := sinkCountsOwner(name); ok && labelled && id.Pid <= 0 {
			t.Fatalf("%q read as run %+v", name, id)
		}
		if pid <= 0 {
			return
		}
		id := runid.ID{Pid: pid, Start: start}
		made := strings.Replace(SinkCountsPattern(id), "*", "2718281828", 1)
		if got, labelled, ok := sinkCountsOwner(made); !ok || !labelled || got != id {
			t.Fatalf("%q read as %+v (labelled %v, ok %v), want %+v", made, got, labelled, ok, id)
		}
	})
}

// TestScratchRemovesOnlyDeadRuns: the scratch directory of a run that is
// gone is removed with what its profilers left in it; a live run's, a file
// of that name and what is named otherwise are kept.
func TestScratchRemovesOnlyDeadRuns(t *testing.T) {
	self, err := runid.Self()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mkdir := func(pattern string) string {
		t.Helper()
		d, err := os.MkdirTemp(dir, pattern)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "1234.1.collapsed"), []byte("a;b 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return d
	}
	dead := mkdir(ScratchPattern(deadRun(t)))
	live := mkdir(ScratchPattern(self))
	other := mkdir("toll-other-*")
	file := filepath.Join(dir, "toll-scratch-"+deadRun(t).String()+"-1")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	removed, err := Scratch{Dir: dir}.Clean(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].Kind != "scratch directory" || !strings.HasPrefix(removed[0].What, dead) {
		t.Errorf("removed %v, want %s alone", removed, dead)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is left: %v", dead, err)
	}
	for _, p := range []string{live, other, file} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s, not a dead run's scratch directory, was removed: %v", p, err)
		}
	}
	if !slices.Contains(Cleaners(), Cleaner(Scratch{Dir: os.TempDir()})) {
		t.Errorf("Cleaners() = %v: toll cleanup does not remove scratch directories", Cleaners())
	}
	if got := Describe(append(removed, removed...)); !strings.Contains(got, "2 scratch directories") {
		t.Errorf("Describe: %q", got)
	}
}
