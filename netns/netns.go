// Package netns runs toll in a network namespace of its own that holds only
// loopback, so nothing a service does (an agent probing a cloud metadata
// address or phoning its vendor) can leave the machine.
//
// A Go program cannot move itself into a new network namespace safely (the
// runtime's threads would stay behind), so toll runs itself again: Reexec
// starts the same binary with the same arguments in a fresh namespace and
// waits for it, and the re-executed toll calls Setup before anything else.
// Services, the load generator and the telemetry sinks all live in that one
// namespace and reach each other over its loopback.
package netns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// envMarker is set in the environment of the re-executed toll, so it never
// re-executes itself again.
const envMarker = "TOLL_NETNS_CHILD"

// Loopback is the name of the loopback interface.
const Loopback = "lo"

// Reexeced reports whether this process is toll run again by Reexec, and
// removes the marker from the environment so the services it starts do not
// inherit it.
func Reexeced() bool {
	_, ok := os.LookupEnv(envMarker)
	if ok {
		os.Unsetenv(envMarker)
	}
	return ok
}

// Isolated reports whether the current network namespace holds no interface
// but loopback, and names the others when it holds some.
func Isolated() (bool, []string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return false, nil, fmt.Errorf("list network interfaces: %w", err)
	}
	var others []string
	for _, i := range ifs {
		if i.Name != Loopback {
			others = append(others, i.Name)
		}
	}
	return len(others) == 0, others, nil
}

// Setup makes the current network namespace ready for a run: it checks that
// the namespace holds only loopback (so it never touches a host's network)
// and brings loopback up, which a new namespace starts without.
func Setup() error {
	ok, others, err := Isolated()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("this network namespace is not isolated: it has %v besides %s", others, Loopback)
	}
	return loopbackUp()
}

// loopbackUp sets IFF_UP on the loopback interface.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring %s up: socket: %w", Loopback, err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(Loopback)
	if err != nil {
		return fmt.Errorf("bring %s up: %w", Loopback, err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring %s up: read flags: %w", Loopback, err)
	}
	if ifr.Uint16()&unix.IFF_UP != 0 {
		return nil
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring %s up: %w", Loopback, err)
	}
	return nil
}

// Stdio are the standard streams of the re-executed toll. *os.File values
// are passed on as they are, so a terminal stays a terminal.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Reexec runs the current binary again, with the same arguments and
// environment, in a new network namespace, and returns its exit code once it
// has exited (128+N when signal N killed it).
//
// The child runs in a process group of its own, so a terminal's Ctrl-C
// reaches it once, through Reexec: every signal received on sigs is passed
// on to it. It is killed if toll dies (parent-death signal), and when ctx
// is done.
//
// Creating a network namespace needs CAP_SYS_ADMIN; without it the error
// says so, and nothing runs.
func Reexec(ctx context.Context, stdio Stdio, sigs <-chan os.Signal) (int, error) {
	if _, ok := os.LookupEnv(envMarker); ok {
		return 0, errors.New("create network namespace: toll is already running re-executed in one")
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = slices.Clone(os.Args)
	cmd.Env = append(os.Environ(), envMarker+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.In, stdio.Out, stdio.Err
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNET,
		Pdeathsig:  syscall.SIGKILL,
		Setpgid:    true,
	}
	// The parent-death signal fires when the thread that forked the child
	// exits: the goroutine that forks it stays on that thread, waiting
	// for it, until it is gone. The rest runs on any thread.
	started, done := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return 0, startError(err)
	}
	// SIGQUIT, Go's "print every goroutine and exit", asks the child for
	// its goroutines first: the one that does the work is the child, and a
	// dump of this one alone shows only that it waits.
	quit := make(chan os.Signal, 1)
	signal.Notify(quit, syscall.SIGQUIT)
	defer signal.Stop(quit)
	// A toll whose last thread is still reaping a child as it exits can
	// stay a zombie for minutes on a busy machine (Linux invalidating the
	// child's /proc entries), and waitid returns only then: once the
	// child has been a zombie for zombieWait, its exit status is read
	// from /proc, and init reaps it later.
	poll := time.NewTicker(zombiePoll)
	defer poll.Stop()
	var zombieSince time.Time
	for {
		select {
		case <-poll.C:
			ws, ok := zombieStatus(cmd.Process.Pid)
			switch {
			case !ok:
				zombieSince = time.Time{}
			case zombieSince.IsZero():
				zombieSince = time.Now()
			case time.Since(zombieSince) >= zombieWait:
				if ws.Signaled() {
					return 128 + int(ws.Signal()), nil
				}
				return ws.ExitStatus(), nil
			}
		case sig := <-sigs:
			cmd.Process.Signal(sig)
		case err := <-done:
			return exitCode(cmd, err)
		case <-quit:
			cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-done:
			case <-time.After(quitWait):
			}
			signal.Reset(syscall.SIGQUIT)
			syscall.Kill(os.Getpid(), syscall.SIGQUIT)
			// The runtime prints this process's goroutines and exits; the
			// child, if still there, dies with it (parent-death signal).
			select {}
		}
	}
}

// zombiePoll is how often Reexec looks whether the child has become a
// zombie, and zombieWait how long it then waits for waitid.
const (
	zombiePoll = 500 * time.Millisecond
	zombieWait = 2 * time.Second
)

// zombieStatus returns the wait status of process pid when it is a zombie
// (/proc/PID/stat, state Z and its 52nd field, exit_code), and ok false
// otherwise.
func zombieStatus(pid int) (ws syscall.WaitStatus, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing parenthesis (field 3 is the state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 50 || fields[0] != "Z" {
		return 0, false
	}
	code, err := strconv.Atoi(fields[49])
	if err != nil {
		return 0, false
	}
	return syscall.WaitStatus(code), true
}

// quitWait is how long Reexec waits, on SIGQUIT, for the child to print
// its goroutines and exit before it prints its own.
const quitWait = 3 * time.Second

// startError explains why the namespace could not be created.
func startError(err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("create network namespace: %w (run as root, or inside `unshare --user --map-root-user --net`)", unix.EPERM)
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("create network namespace: %w (the kernel lacks network namespaces, CONFIG_NET_NS)", unix.EINVAL)
	case errors.Is(err, unix.ENOSPC):
		return fmt.Errorf("create network namespace: %w (the limit in /proc/sys/user/max_net_namespaces is reached)", unix.ENOSPC)
	}
	return fmt.Errorf("create network namespace: %w", err)
}

// exitCode turns the child's end into an exit code.
func exitCode(cmd *exec.Cmd, err error) (int, error) {
	st := cmd.ProcessState
	if st == nil {
		return 0, fmt.Errorf("wait for toll in its network namespace: %w", err)
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return st.ExitCode(), nil
}
