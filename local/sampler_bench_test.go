package local

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/probe"
	"github.com/tollperf/toll/probe/runtimes"
)

// BenchmarkSampleJVM measures what one sample of a service costs toll: its
// process tree from /proc, its cgroup's counters and its JVM's counters,
// for a JVM with 200 threads. The figure to read is pct-core@1Hz: the share
// of one core the probe takes at one sample a second.
//
//	go test ./local -run '^$' -bench SampleJVM -benchtime 2000x
func BenchmarkSampleJVM(b *testing.B) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		b.Skip("no javac: ", err)
	}
	dir := b.TempDir()
	if out, err := exec.Command(javac, "-d", dir, "testdata/Threads.java").CombinedOutput(); err != nil {
		b.Fatalf("javac: %v\n%s", err, out)
	}
	cmd := exec.Command("java", "-Xmx64m", "-cp", dir, "Threads", "200")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		b.Fatalf("java: %v %q", err, line)
	}
	sp := &serviceProbe{name: "jvm"}
	if sp.tree, err = probe.NewProcessTree(cmd.Process.Pid); err != nil {
		b.Fatal(err)
	}
	if _, err := cgroup.Detect(); err == nil {
		tree, err := cgroup.NewTree(fmt.Sprintf("bench-%d", os.Getpid()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { tree.Close() })
		g, err := tree.NewGroup("jvm", cgroup.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range g.ProcsFiles() {
			if err := os.WriteFile(f, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		sp.cg = g
	}
	s := &sampler{t0: time.Now(), services: []*serviceProbe{sp}}
	defer s.close()
	s.take(time.Now()) // lists the tree
	r, rp, err := runtimes.All().Find("/proc", sp.tree.Pids())
	if err != nil {
		b.Fatal(err)
	}
	sp.rt, sp.rtName = rp, r.Name()
	s.take(time.Now())
	p := sp.points[len(sp.points)-1]
	if p.Runtime("jvm") == nil || p.Threads < 200 {
		b.Fatalf("sample %+v: want a JVM with ≥ 200 threads", p)
	}
	var ru0, ru1 syscall.Rusage
	b.ResetTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for b.Loop() {
		s.take(time.Now())
		sp.points = sp.points[:0]
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	perOp := float64(cpu.Microseconds()) / float64(b.N)
	b.ReportMetric(perOp, "cpu-µs/op")
	b.ReportMetric(perOp/1e6*100, "pct-core@1Hz")
	b.ReportMetric(float64(p.Threads), "threads")
}
