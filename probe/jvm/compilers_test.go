package jvm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

func TestIsCompilerThread(t *testing.T) {
	for _, tc := range []struct {
		comm string
		want bool
	}{
		{"C1 CompilerThre", true},
		{"C2 CompilerThre", true},
		{"JVMCI CompilerT", true},
		{"GC Thread#0", false},
		{"VM Thread", false},
		{"Sweeper thread", false},
		{"java", false},
		{"C2", false},
	} {
		if got := IsCompilerThread(tc.comm); got != tc.want {
			t.Errorf("IsCompilerThread(%q) = %v, want %v", tc.comm, got, tc.want)
		}
	}
}

// fakeThread is one thread of a fake /proc: its name and its CPU in ns.
type fakeThread struct {
	comm string
	ns   uint64
}

// writeThreads lays out /proc/PID/task as threads say, removing the
// threads of an earlier layout.
func writeThreads(t *testing.T, root string, pid int, threads map[int]fakeThread) {
	t.Helper()
	task := filepath.Join(root, strconv.Itoa(pid), "task")
	if err := os.RemoveAll(task); err != nil {
		t.Fatal(err)
	}
	for tid, th := range threads {
		dir := filepath.Join(task, strconv.Itoa(tid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "comm"), []byte(th.comm+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		stat := strconv.FormatUint(th.ns, 10) + " 1000 5\n"
		if err := os.WriteFile(filepath.Join(dir, "schedstat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompilerThreadsCPU reads a fake /proc through a JVM's life: compiler
// threads started and stopped by HotSpot, a thread id reused. The total
// counts compiler threads only and never falls.
func TestCompilerThreadsCPU(t *testing.T) {
	const pid = 4242
	root := t.TempDir()
	steps := []struct {
		name    string
		threads map[int]fakeThread
		want    time.Duration
	}{
		{"started: one C1, one C2, the application", map[int]fakeThread{
			4242: {"java", 9e9}, 4250: {"C1 CompilerThre", 100}, 4251: {"C2 CompilerThre", 200}, 4252: {"GC Thread#0", 5e6},
		}, 300},
		{"a second C2 starts", map[int]fakeThread{
			4242: {"java", 10e9}, 4250: {"C1 CompilerThre", 150}, 4251: {"C2 CompilerThre", 400}, 4252: {"GC Thread#0", 6e6}, 4260: {"C2 CompilerThre", 50},
		}, 600},
		{"the second C2 stops: its 50 ns stay", map[int]fakeThread{
			4242: {"java", 11e9}, 4250: {"C1 CompilerThre", 150}, 4251: {"C2 CompilerThre", 450}, 4252: {"GC Thread#0", 7e6},
		}, 650},
		{"its id is reused by an application thread", map[int]fakeThread{
			4242: {"java", 12e9}, 4250: {"C1 CompilerThre", 160}, 4251: {"C2 CompilerThre", 450}, 4252: {"GC Thread#0", 8e6}, 4260: {"http-nio-8080-e", 3e9},
		}, 660},
		{"the GC thread exits", map[int]fakeThread{
			4242: {"java", 13e9}, 4250: {"C1 CompilerThre", 160}, 4251: {"C2 CompilerThre", 450}, 4260: {"http-nio-8080-e", 4e9},
		}, 660},
		{"its id is reused by a compiler thread", map[int]fakeThread{
			4242: {"java", 14e9}, 4250: {"C1 CompilerThre", 160}, 4251: {"C2 CompilerThre", 450}, 4260: {"http-nio-8080-e", 5e9}, 4252: {"C2 CompilerThre", 30},
		}, 690},
	}
	c, err := NewCompilerThreads(root, pid)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		writeThreads(t, root, pid, st.threads)
		got, err := c.CPU()
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, st.name, err)
		}
		if got != st.want {
			t.Errorf("step %d (%s): CPU %d ns, want %d", i, st.name, got, st.want)
		}
	}
	gone, err := NewCompilerThreads(root, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gone.CPU(); err == nil {
		t.Error("a process that is not there: no error")
	}
}

// TestCompilerThreadsLive reads a real JVM's compiler threads while it
// compiles: their CPU grows, and is a part of the process's own CPU.
func TestCompilerThreadsLive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM; skipped with -short")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skipf("needs a JDK: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "Compile.java")
	// Hot loops over a few methods for the JIT to compile, for at most 20 s.
	const prog = `public class Compile {
    public static void main(String[] a) throws Exception {
        long s = 0, end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
            for (int j = 0; j < 100_000; j++) s += Integer.toString(j).hashCode() ^ Long.toHexString(s).length();
            Thread.sleep(1);
        }
        System.out.println(s);
    }
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", src)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	c, err := NewCompilerThreads(procfs.DefaultMountPoint, cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	proc, err := procfs.NewProc(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var prev, first time.Duration
	for i := range 30 {
		time.Sleep(100 * time.Millisecond)
		got, err := c.CPU()
		if err != nil {
			t.Fatal(err)
		}
		if got < prev {
			t.Fatalf("reading %d: compiler CPU fell from %s to %s", i, prev, got)
		}
		if i == 0 {
			first = got
		}
		prev = got
	}
	st, err := proc.Stat()
	if err != nil {
		t.Fatal(err)
	}
	whole := time.Duration(st.CPUTime() * float64(time.Second))
	t.Logf("compiler threads %s of the JVM's %s", prev, whole)
	if prev <= first || prev == 0 {
		t.Errorf("compiler CPU %s after 3 s of compiling, %s at first: want it to grow", prev, first)
	}
	// The process's CPU is counted in ticks (10 ms): allow one per thread.
	if prev > whole+200*time.Millisecond {
		t.Errorf("compiler threads %s, more than the whole JVM's %s", prev, whole)
	}
}
