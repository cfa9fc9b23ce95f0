package probe_test

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/probe"
)

// startScript runs script with /bin/sh; see start.
func startScript(t *testing.T, script string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	return start(t, "/bin/sh", "-c", script)
}

// start runs argv in a process group of its own, which the test kills when
// it ends, and returns the process and its stdout.
func start(t *testing.T, argv ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd, bufio.NewReader(out)
}

// waitLine reads out until a line equal to want, failing the test after 5 s.
func waitLine(t *testing.T, out *bufio.Reader, want string) {
	t.Helper()
	found := make(chan error, 1)
	go func() {
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				found <- err
				return
			}
			if strings.TrimSpace(line) == want {
				found <- nil
				go io.Copy(io.Discard, out)
				return
			}
		}
	}()
	select {
	case err := <-found:
		if err != nil {
			t.Fatalf("waiting for %q: %v", want, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no %q within 5s", want)
	}
}

// newTree returns a ProcessTree of pid or fails the test.
func newTree(t *testing.T, pid int) *probe.ProcessTree {
	t.Helper()
	tree, err := probe.NewProcessTree(pid)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// sample samples s or fails the test.
func sample(t *testing.T, s probe.Sampler) probe.Sample {
	t.Helper()
	smp, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	return smp
}
