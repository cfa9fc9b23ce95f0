// Package supervise is the small process that stands between toll and each
// service it starts (toll's hidden `_exec` command), so that nothing a
// service starts outlives toll.
//
// The supervisor makes itself a child subreaper, so every process the
// service orphans (a daemon's double fork, the background jobs of a shell
// script) is reparented to it rather than to init; starts the service as
// its child; passes the signals toll sends it on to the service; reaps the
// orphans; and exits as the service exits (the same exit status, or the
// same signal). It watches toll through a pidfd, and through its
// parent-death signal, a catchable one (DeathSignal): when toll dies,
// whichever way, it SIGKILLs every process in its cgroups, every process
// descended from it, and every process of its process group, and only then
// exits. The service's own parent-death signal is SIGKILL, tied to the
// supervisor, so a supervisor killed outright takes the service with it.
//
// While the service runs, the supervisor sleeps in wait4, poll and the Go
// runtime's signal wait; it costs nothing measurable.
package supervise

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/cgroup"
)

const (
	// killTimeout bounds how long the supervisor keeps killing what the
	// service left once toll is gone.
	killTimeout = 5 * time.Second
	// killPoll is how often it looks again for processes left.
	killPoll = 10 * time.Millisecond
	// reapWait bounds the wait for the killed service's exit status.
	reapWait = 2 * time.Second
	// parentPoll is how often the parent is checked where there are no
	// pidfds, once a parent-death signal came while it still lived.
	parentPoll = 20 * time.Millisecond
)

// DeathSignal is the parent-death signal toll starts its supervisors with:
// catchable, so that a supervisor can kill what the service started before
// it exits itself.
const DeathSignal = unix.SIGHUP

// ErrParentGone is returned when the parent (toll) died before or while
// the service ran; everything the service started has been killed.
var ErrParentGone = errors.New("toll, the parent, is gone")

// Config says what to run and whom to watch.
type Config struct {
	// Argv is the service's program and its arguments. A program name
	// without a slash is looked up in PATH.
	Argv []string
	// Env is the service's environment; nil inherits the supervisor's.
	Env []string
	// Parent is the pid of the process whose death ends the service
	// (toll). It must be the supervisor's parent when Run is called.
	Parent int
	// DeathSignal is the supervisor's parent-death signal (set by
	// whoever started it, with PR_SET_PDEATHSIG). It must be catchable,
	// not SIGKILL, and it is never passed on to the service.
	DeathSignal syscall.Signal
	// CgroupProcs are the cgroup.procs files of the cgroups the
	// supervisor has joined (so the service starts in them); every
	// process in them is killed when the parent dies.
	CgroupProcs []string
	// Log receives the supervisor's own messages; nil discards them.
	Log io.Writer
}

// PassedOn returns the signals a supervisor started with toll's
// DeathSignal passes on to the service: a service's stop signal must be
// one of them.
func PassedOn() []syscall.Signal {
	var out []syscall.Signal
	for _, s := range forwarded(DeathSignal) {
		out = append(out, s.(syscall.Signal))
	}
	return out
}

// forwarded returns the signals the supervisor passes on to the service:
// SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2, but for its own
// parent-death signal.
func forwarded(death syscall.Signal) []os.Signal {
	var out []os.Signal
	for _, s := range []syscall.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2} {
		if s != death {
			out = append(out, s)
		}
	}
	return out
}

// Run starts the service and supervises it until it exits, and returns its
// wait status. If the parent dies first, Run kills every process of the
// service and returns the service's status (normally killed by SIGKILL)
// with ErrParentGone. Run makes the calling process a child subreaper and
// handles signals for the rest of its life; call it once, from a process
// that does nothing else.
func Run(cfg Config) (unix.WaitStatus, error) {
	if len(cfg.Argv) == 0 {
		return 0, errors.New("supervise: no program given")
	}
	if cfg.DeathSignal == 0 || cfg.DeathSignal == unix.SIGKILL || cfg.DeathSignal == unix.SIGSTOP {
		return 0, fmt.Errorf("supervise: parent-death signal %v cannot be caught", cfg.DeathSignal)
	}
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("supervise: become child subreaper: %w", err)
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, append(forwarded(cfg.DeathSignal), cfg.DeathSignal)...)
	defer signal.Stop(sigs)
	// A pidfd of the parent says when it has exited, all its threads: the
	// parent-death signal comes when the thread that forked the supervisor
	// exits, which may be before the rest of toll, and later ones may be
	// merged with it. Opened before the check below, it is of the parent.
	pidfd, pidfdErr := unix.PidfdOpen(cfg.Parent, 0)
	if pidfdErr == nil {
		defer unix.Close(pidfd)
	}
	// From here on the parent's death is caught; if it came before, the
	// parent is already init or a subreaper above it.
	if os.Getppid() != cfg.Parent {
		return 0, fmt.Errorf("supervise: %w before %s started", ErrParentGone, cfg.Argv[0])
	}
	parentGone := make(chan struct{})
	var gone, watching sync.Once
	markGone := func() { gone.Do(func() { close(parentGone) }) }
	watch := func() {
		watching.Do(func() {
			if pidfdErr == nil {
				go awaitPidfd(pidfd, markGone)
			} else {
				go pollParent(cfg.Parent, markGone)
			}
		})
	}
	if pidfdErr == nil {
		watch()
	}

	cmd := exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
	cmd.Env = cfg.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	exited := make(chan unix.WaitStatus, 1)
	go startAndReap(cmd, started, exited, log)
	if err := <-started; err != nil {
		return 0, fmt.Errorf("supervise: start %s: %w", cfg.Argv[0], err)
	}
	svc := cmd.Process.Pid

	for {
		select {
		case ws := <-exited:
			return ws, nil
		case <-parentGone:
			err := killAll(cfg.CgroupProcs)
			select {
			case ws := <-exited:
				return ws, errors.Join(ErrParentGone, err)
			case <-time.After(reapWait):
				return 0, errors.Join(ErrParentGone, err, fmt.Errorf("service %d not reaped %v after SIGKILL", svc, reapWait))
			}
		case sig := <-sigs:
			if sig == cfg.DeathSignal {
				// Not passed on: it is the supervisor's own. The parent
				// has died, or one of its threads has (see above).
				if os.Getppid() != cfg.Parent {
					markGone()
				} else {
					watch()
				}
				continue
			}
			// A group signal reaches the service by itself as well; the
			// kernel merges the two while the first is pending.
			if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
				fmt.Fprintf(log, "toll _exec: pass %v on to %d: %v\n", sig, svc, err)
			}
		}
	}
}

// awaitPidfd calls gone once the process of pidfd has exited.
func awaitPidfd(pidfd int, gone func()) {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) || (err == nil && n == 0) {
			continue
		}
		gone()
		return
	}
}

// pollParent calls gone once the calling process's parent is no longer
// parent, looking every parentPoll; it is the way to wait where pidfds are
// missing (Linux before 5.3).
func pollParent(parent int, gone func()) {
	for os.Getppid() == parent {
		time.Sleep(parentPoll)
	}
	gone()
}

// startAndReap starts cmd, reports the outcome on started, then reaps every
// child of the process (the service and the orphans reparented to this
// subreaper) until the service itself is reaped, whose status goes to
// exited. It keeps its goroutine locked to the thread that forked the
// service, because the service's parent-death signal fires when that thread
// ends, not the process.
func startAndReap(cmd *exec.Cmd, started chan<- error, exited chan<- unix.WaitStatus, log io.Writer) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	started <- nil
	svc := cmd.Process.Pid
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			// Only if something else reaped the service: it is gone.
			fmt.Fprintf(log, "toll _exec: wait for %d: %v\n", svc, err)
			exited <- unix.WaitStatus(0xff << 8) // exit status 255
			return
		case pid == svc:
			exited <- ws
			return
		}
	}
}

// killAll SIGKILLs every process in the cgroups of procsFiles, every
// descendant of the calling process, and every process of its process
// group when it leads one, until none is left or killTimeout passes. The
// calling process is spared.
func killAll(procsFiles []string) error {
	proc, err := procfs.NewDefaultFS()
	if err != nil {
		return fmt.Errorf("supervise: %w", err)
	}
	deadline := time.Now().Add(killTimeout)
	for {
		pids, err := targets(proc, os.Getpid(), procsFiles)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			unix.Kill(p, unix.SIGKILL)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("supervise: %d process(es) left %v after SIGKILL: %v", len(pids), killTimeout, pids[:min(len(pids), 10)])
		}
		time.Sleep(killPoll)
	}
}

// targets lists the live processes killAll must kill: those in the
// cgroups, those descended from self, and those in self's process group if
// self leads it. Zombies are left out: they are dead, and their parent (or
// init) reaps them.
func targets(proc procfs.FS, self int, procsFiles []string) ([]int, error) {
	var out []int
	if len(procsFiles) > 0 {
		pids, err := cgroup.PidsIn(procsFiles)
		if err != nil {
			return nil, fmt.Errorf("supervise: %w", err)
		}
		out = append(out, pids...)
	}
	procs, err := proc.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("supervise: %w", err)
	}
	type entry struct {
		ppid, pgrp int
		zombie     bool
	}
	table := make(map[int]entry, len(procs))
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // gone since the listing
		}
		table[p.PID] = entry{ppid: st.PPID, pgrp: st.PGRP, zombie: st.State == "Z" || st.State == "X"}
	}
	leader := unix.Getpgrp() == self
	for pid, e := range table {
		if pid == self || e.zombie {
			continue
		}
		if leader && e.pgrp == self {
			out = append(out, pid)
			continue
		}
		// Walk up; a cycle is impossible but a vanished parent ends it.
		for p, n := e.ppid, 0; p > 1 && n < len(table); p, n = table[p].ppid, n+1 {
			if p == self {
				out = append(out, pid)
				break
			}
			if _, ok := table[p]; !ok {
				break
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	// The supervisor is in its own cgroups; a zombie listed there is not
	// in the table as alive.
	return slices.DeleteFunc(out, func(p int) bool {
		e, ok := table[p]
		return p == self || (ok && e.zombie)
	}), nil
}

// Exit ends the calling process the way the service ended: with its exit
// status, or killed by the same signal (without a core dump), so that
// whoever waits for the supervisor learns what it would have learnt from
// the service.
func Exit(ws unix.WaitStatus) {
	switch {
	case ws.Exited():
		os.Exit(ws.ExitStatus())
	case ws.Signaled():
		raise(ws.Signal())
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(255)
}

// raise kills the calling process with sig: the Go runtime's handler is
// replaced with the default action first (which for the runtime's own
// signals would otherwise be a panic or nothing), and core dumps are
// disabled. It returns only if sig's default action is not to terminate.
func raise(sig unix.Signal) {
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// struct sigaction with SIG_DFL, no flags and an empty mask is all
	// zeros on every architecture; the kernel's sigset is 8 bytes.
	var act [4]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	unix.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond) // a signal to self is delivered on return; this is for safety
}
