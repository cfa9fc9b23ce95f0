package probe_test

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/probe"
)

// benchProcs is how many processes the benchmarks run among.
const benchProcs = 200

// fillProcs starts sleeps until the machine has about benchProcs processes;
// they end with the benchmark.
func fillProcs(b *testing.B) int {
	b.Helper()
	n := countProcs(b)
	for ; n < benchProcs; n++ {
		cmd := exec.Command("sleep", "300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	return countProcs(b)
}

// countProcs counts the processes in /proc.
func countProcs(b *testing.B) int {
	b.Helper()
	names, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, e := range names {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}

// selfCPU returns the CPU time this process has used.
func selfCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkProcessTreeSample measures what a sample of a small tree (a
// wrapper and two children) costs among about 200 processes. The figure to
// read is cpu-µs/op: the CPU the probe takes from the machine per sample.
func BenchmarkProcessTreeSample(b *testing.B) {
	procs := fillProcs(b)
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & sleep 300 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	time.Sleep(100 * time.Millisecond)
	tree, err := probe.NewProcessTree(cmd.Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := selfCPU(b)
	var s probe.Sample
	for b.Loop() {
		if s, err = tree.Sample(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((selfCPU(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(procs), "procs")
	b.ReportMetric(float64(s.Procs), "tree-procs")
}

// BenchmarkFullScan measures NewProcessTree, which reads every process's
// stat file once: what each sample would cost without remembering parents.
func BenchmarkFullScan(b *testing.B) {
	procs := fillProcs(b)
	b.ResetTimer()
	cpu := selfCPU(b)
	for b.Loop() {
		if _, err := probe.NewProcessTree(os.Getpid()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((selfCPU(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(procs), "procs")
}
