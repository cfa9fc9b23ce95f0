package netns

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// modeEnv tells the re-executed test binary what to do.
const modeEnv = "NETNS_TEST_MODE"

func TestMain(m *testing.M) {
	if Reexeced() {
		os.Exit(child(os.Getenv(modeEnv)))
	}
	os.Exit(m.Run())
}

// child is the test binary run again by Reexec.
func child(mode string) int {
	switch mode {
	case "exit":
		return 5
	case "signal":
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		fmt.Println("ready")
		select {
		case <-sigs:
			return 7
		case <-time.After(10 * time.Second):
			return 1
		}
	}
	if err := Setup(); err != nil {
		fmt.Println("setup:", err)
		return 1
	}
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		fmt.Printf("interface %s %s\n", i.Name, i.Flags)
	}
	// Loopback works: a listener on it is reached.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	defer ln.Close()
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err != nil {
		fmt.Println("loopback:", err)
	} else {
		c.Close()
		fmt.Println("loopback: ok")
	}
	// A cloud metadata address is unreachable at once: there is no route.
	_, err = net.DialTimeout("tcp", "169.254.169.254:80", 2*time.Second)
	fmt.Println("metadata:", err)
	return 0
}

// TestReexec runs the test binary again in a new network namespace and checks
// what it sees there, that its exit code comes back, and that signals reach it.
func TestReexec(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root")
	}
	tests := []struct {
		mode     string
		wantCode int
		wantOut  []string
	}{
		{"isolated", 0, []string{"interface lo up|loopback", "loopback: ok", "metadata: dial tcp 169.254.169.254:80: connect: network is unreachable"}},
		{"exit", 5, nil},
		{"signal", 7, []string{"ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Setenv(modeEnv, tt.mode)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			sigs := make(chan os.Signal, 1)
			lines := make(chan string, 16)
			go func() {
				sc := bufio.NewScanner(r)
				for sc.Scan() {
					if sc.Text() == "ready" {
						sigs <- syscall.SIGTERM
					}
					lines <- sc.Text()
				}
				close(lines)
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			code, err := Reexec(ctx, Stdio{Out: w, Err: w}, sigs)
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for l := range lines {
				out = append(out, l)
			}
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; output:\n%s", code, tt.wantCode, strings.Join(out, "\n"))
			}
			if n := strings.Count(strings.Join(out, "\n"), "interface "); tt.mode == "isolated" && n != 1 {
				t.Errorf("%d interfaces in the new namespace, want lo alone:\n%s", n, strings.Join(out, "\n"))
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(strings.Join(out, "\n"), want) {
					t.Errorf("output lacks %q:\n%s", want, strings.Join(out, "\n"))
				}
			}
		})
	}
}

// TestReexecRefusesNesting checks that a re-executed toll never creates
// another namespace.
func TestReexecRefusesNesting(t *testing.T) {
	t.Setenv(envMarker, "1")
	if _, err := Reexec(context.Background(), Stdio{}, nil); err == nil {
		t.Fatal("Reexec ran inside a re-executed process")
	}
}

// TestSetupLeavesHostAlone checks that Setup refuses a namespace with more
// than loopback, and so never changes a host's interfaces.
func TestSetupLeavesHostAlone(t *testing.T) {
	ok, others, err := Isolated()
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Skip("this machine's namespace holds only loopback")
	}
	err = Setup()
	if err == nil || !strings.Contains(err.Error(), others[0]) {
		t.Errorf("Setup in a namespace with %v: %v, want a refusal naming %s", others, err, others[0])
	}
}

// TestStartError checks that a refusal to create a namespace says why.
func TestStartError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: unix.EPERM}, "create network namespace: operation not permitted (run as root"},
		{unix.EINVAL, "CONFIG_NET_NS"},
		{unix.ENOSPC, "max_net_namespaces"},
		{errors.New("boom"), "create network namespace: boom"},
	}
	for _, tt := range tests {
		if got := startError(tt.err).Error(); !strings.Contains(got, tt.want) {
			t.Errorf("startError(%v) = %q, want it to contain %q", tt.err, got, tt.want)
		}
	}
}

// TestZombieStatus reads the exit status of children left unreaped (a
// zombie), as Reexec does of a toll whose waitid does not return, and
// nothing of a process that runs.
func TestZombieStatus(t *testing.T) {
	for _, tt := range []struct {
		script string
		code   int
		signal syscall.Signal
	}{
		{"exit 7", 7, 0},
		{"exit 0", 0, 0},
		{"kill -TERM $$", 0, syscall.SIGTERM},
	} {
		pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", tt.script}, &syscall.ProcAttr{})
		if err != nil {
			t.Fatal(err)
		}
		var ws syscall.WaitStatus
		var ok bool
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if ws, ok = zombieStatus(pid); ok {
				break
			}
		}
		var reaped syscall.WaitStatus
		syscall.Wait4(pid, &reaped, 0, nil)
		if !ok {
			t.Errorf("%q: not read as a zombie", tt.script)
			continue
		}
		if ws != reaped || (tt.signal == 0 && ws.ExitStatus() != tt.code) || (tt.signal != 0 && ws.Signal() != tt.signal) {
			t.Errorf("%q: status %#x (exit %d, signal %v), waitid said %#x", tt.script, int(ws), ws.ExitStatus(), ws.Signal(), int(reaped))
		}
	}
	if _, ok := zombieStatus(os.Getpid()); ok {
		t.Error("a running process read as a zombie")
	}
}
