package tolltest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Background is toll started by Start and running while a test watches
// it: its combined output, its exit, and the processes it started.
type Background struct {
	cmd  *exec.Cmd
	out  syncBuffer
	done chan error
	err  error
	exit bool
}

// Start runs toll with args in the background, its stdout and stderr
// together in Output. The test's cleanup kills it if it is still running.
func Start(t *testing.T, args ...string) *Background {
	t.Helper()
	b := &Background{cmd: Command(t, args...), done: make(chan error, 1)}
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.out
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.done <- b.cmd.Wait() }()
	t.Cleanup(func() { b.cmd.Process.Kill() })
	return b
}

// Pid is toll's process ID.
func (b *Background) Pid() int { return b.cmd.Process.Pid }

// Signal sends sig to toll.
func (b *Background) Signal(sig os.Signal) { b.cmd.Process.Signal(sig) }

// Output is what toll has printed so far.
func (b *Background) Output() string { return b.out.String() }

// Children returns the processes toll has started that are running now
// (Descendants of its process).
func (b *Background) Children(t *testing.T) []int {
	t.Helper()
	return Descendants(t, b.Pid())
}

// Wait waits up to Patience(t, d) for toll to exit and returns its exit
// error (nil for exit 0; ExitCode reads it). The test fails, with toll's
// output and the goroutines it printed on SIGQUIT, if toll is still
// running then.
func (b *Background) Wait(t *testing.T, d time.Duration) error {
	t.Helper()
	if b.exit {
		return b.err
	}
	d = Patience(t, d)
	select {
	case b.err = <-b.done:
		b.exit = true
		return b.err
	case <-time.After(d):
		// Ask for the goroutines of the toll that hangs, so the failure
		// says where.
		_ = Quit(b.cmd)
		select {
		case <-b.done:
		case <-time.After(WaitDelay):
		}
		t.Fatalf("toll did not exit within %v (its goroutines at SIGQUIT follow)\n%s", d, b.Output())
		return nil
	}
}

// Eventually polls cond every 100 ms for up to d and reports whether it
// held.
func Eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// Outlived waits up to d for the processes ps to end (they get a moment
// to receive their parent-death signal), then kills and returns those
// still alive, for the test to report.
func Outlived(ps []int, d time.Duration) []int {
	var left []int
	Eventually(d, func() bool {
		left = Alive(ps)
		return len(left) == 0
	})
	for _, p := range left {
		if proc, err := os.FindProcess(p); err == nil {
			proc.Kill()
		}
	}
	return left
}

// syncBuffer is a bytes.Buffer that a test may read while the command's
// output is copied into it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Patience returns how long a test should wait for what takes up to d on
// an idle machine: d times the machine's load per CPU (its 1-minute load
// average over its CPUs) where that is above 1, as a busy machine gives
// each process that much less of a CPU; never past the test binary's
// deadline less DeadlineMargin, when Command's toll is stopped anyway.
func Patience(t *testing.T, d time.Duration) time.Duration {
	if per := LoadPerCPU(); per > 1 {
		d = time.Duration(float64(d) * per)
	}
	if end, ok := t.Deadline(); ok {
		if left := time.Until(end.Add(-DeadlineMargin)); left > 0 && left < d {
			d = left
		}
	}
	return d
}

// LoadPerCPU returns the machine's 1-minute load average over its CPUs
// (0 where it cannot be read): above 1, processes wait for a CPU.
func LoadPerCPU() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var load float64
	if _, err := fmt.Sscan(string(b), &load); err != nil {
		return 0
	}
	return load / float64(runtime.NumCPU())
}
