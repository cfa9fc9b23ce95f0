package supervise

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// roleEnv makes the test binary play a part: "supervisor" runs Run on the
// arguments after "--"; "parent" starts a supervisor of them (with SIGHUP as
// its parent-death signal), prints its pid and waits to be killed.
const roleEnv = "SUPERVISE_TEST_ROLE"

// threadLife is how long the "parent-thread" parent keeps the thread that
// forked the supervisor.
const threadLife = time.Second

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "supervisor":
		ws, err := Run(Config{Argv: argsAfterDash(), Parent: os.Getppid(), DeathSignal: unix.SIGHUP, Log: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, "supervisor:", err)
			if !errors.Is(err, ErrParentGone) {
				os.Exit(99)
			}
		}
		Exit(ws)
	case "parent", "parent-thread":
		// The supervisor's parent-death signal is tied to the thread that
		// forks it. "parent-thread" lets that thread exit (a goroutine
		// that ends while locked takes its thread with it) while the
		// parent lives on, as the first of toll's threads to go does. The
		// main thread is never ended; keep it for the main goroutine.
		runtime.LockOSThread()
		started := make(chan *exec.Cmd)
		go func() {
			runtime.LockOSThread()
			cmd := supervisorCmd(argsAfterDash()...)
			cmd.SysProcAttr.Pdeathsig = syscall.SIGHUP
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "parent:", err)
				os.Exit(98)
			}
			started <- cmd
			if os.Getenv(roleEnv) == "parent" {
				select {} // keep the thread
			}
			time.Sleep(threadLife) // for the supervisor to be up
		}()
		cmd := <-started
		fmt.Println(cmd.Process.Pid)
		cmd.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func argsAfterDash() []string {
	for i, a := range os.Args {
		if a == "--" {
			return os.Args[i+1:]
		}
	}
	return nil
}

// supervisorCmd returns the test binary as a supervisor of argv, in a
// process group of its own (as toll starts it).
func supervisorCmd(argv ...string) *exec.Cmd {
	self, _ := os.Executable()
	cmd := exec.Command(self, append([]string{"--"}, argv...)...)
	cmd.Env = append(os.Environ(), roleEnv+"=supervisor")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// TestExitStatus checks that the supervisor ends as the service ends: the
// same exit code, or killed by the same signal.
func TestExitStatus(t *testing.T) {
	tests := []struct {
		script string
		code   int
		sig    syscall.Signal
	}{
		{"exit 0", 0, 0},
		{"exit 7", 7, 0},
		{"kill -TERM $$", -1, syscall.SIGTERM},
		{"kill -USR1 $$", -1, syscall.SIGUSR1},
		{"kill -SEGV $$", -1, syscall.SIGSEGV},
		{"kill -KILL $$", -1, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			cmd := supervisorCmd("sh", "-c", tt.script)
			out, _ := cmd.CombinedOutput()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case tt.sig != 0 && (!ws.Signaled() || ws.Signal() != tt.sig || ws.CoreDump()):
				t.Errorf("supervisor ended with %v, want killed by %v without a core dump\n%s", cmd.ProcessState, tt.sig, out)
			case tt.sig == 0 && (!ws.Exited() || ws.ExitStatus() != tt.code):
				t.Errorf("supervisor ended with %v, want exit status %d\n%s", cmd.ProcessState, tt.code, out)
			}
		})
	}
}

// TestForwardsSignals sends SIGTERM and SIGINT to the supervisor alone (not
// its group): the service must get them.
func TestForwardsSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ready := filepath.Join(t.TempDir(), "ready")
			cmd := supervisorCmd("sh", "-c", fmt.Sprintf(`trap 'exit 42' %s; touch %s; while :; do sleep 0.05; done`,
				strings.TrimPrefix(unix.SignalName(sig), "SIG"), ready))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
			waitFile(t, ready)
			unix.Kill(cmd.Process.Pid, sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the service did not exit after %v was sent to the supervisor", sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != 42 {
				t.Errorf("supervisor exited %v, want 42 (the service's trap ran)", cmd.ProcessState)
			}
		})
	}
}

// TestReapsOrphans has the service orphan a child: it must be reparented to
// the supervisor (a subreaper) and, once it exits, reaped (no zombie).
func TestReapsOrphans(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := supervisorCmd("sh", "-c", fmt.Sprintf(`(sleep 0.3 & echo $! > %s.tmp; mv %s.tmp %s); sleep 3`, pidFile, pidFile, pidFile))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
	waitFile(t, pidFile)
	b, _ := os.ReadFile(pidFile)
	orphan, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	var ppid int
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if ppid, _ = parentOf(orphan); ppid == cmd.Process.Pid {
			break
		}
	}
	if ppid != cmd.Process.Pid {
		t.Fatalf("the orphan %d has parent %d, want the supervisor %d", orphan, ppid, cmd.Process.Pid)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", orphan)); errors.Is(err, os.ErrNotExist) {
			return // exited and reaped
		}
	}
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", orphan))
	t.Errorf("the orphan %d was not reaped: %s", orphan, st)
}

// TestKillsEverythingWhenParentDies kills the supervisor's parent with
// SIGKILL while the service has children that ignore SIGTERM, one in its
// process group and one in a session of its own: every one must be gone.
// With "parent-thread", the thread that forked the supervisor has exited
// long before, which sends the parent-death signal while the parent lives:
// the supervisor must carry on, and still notice the parent's death.
func TestKillsEverythingWhenParentDies(t *testing.T) {
	for _, role := range []string{"parent", "parent-thread"} {
		t.Run(role, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pids")
			script := fmt.Sprintf(`trap '' TERM
sleep 100 & echo $! >> %[1]s
setsid sh -c 'trap "" TERM; while :; do sleep 1; done' & echo $! >> %[1]s
echo $$ >> %[1]s
mv %[1]s %[1]s.done
wait`, pidFile)
			self, _ := os.Executable()
			parent := exec.Command(self, "--", "sh", "-c", script)
			parent.Env = append(os.Environ(), roleEnv+"="+role)
			parent.Stderr = os.Stderr
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				parent.Process.Kill()
				t.Fatalf("read supervisor pid: %v", err)
			}
			sup, _ := strconv.Atoi(strings.TrimSpace(line))
			waitFile(t, pidFile+".done")
			b, _ := os.ReadFile(pidFile + ".done")
			pids := []int{sup}
			for _, f := range strings.Fields(string(b)) {
				p, _ := strconv.Atoi(f)
				pids = append(pids, p)
			}
			t.Cleanup(func() {
				for _, p := range pids {
					unix.Kill(p, unix.SIGKILL)
				}
			})
			// For the forking thread to end ("parent-thread"), and its
			// parent-death signal to act if it wrongly would.
			time.Sleep(threadLife + 500*time.Millisecond)
			if left := alive(pids); len(left) != len(pids) {
				t.Fatalf("of %v only %v run before the parent is killed", pids, left)
			}
			parent.Process.Kill()
			parent.Wait()
			var left []int
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if left = alive(pids); len(left) == 0 {
					return
				}
			}
			t.Errorf("after the parent died, %v of %v (supervisor, sleep, setsid loop, service) are alive", left, pids)
		})
	}
}

// waitFile waits up to 10 s for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}

// parentOf returns the parent pid of pid.
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return strconv.Atoi(f[1])
}

// alive returns the pids of ps that exist and are not zombies.
func alive(ps []int) []int {
	var out []int
	for _, p := range ps {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); f[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}
