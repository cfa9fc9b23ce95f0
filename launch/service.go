package launch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/tollperf/toll/cgroup"
)

// startFailureTail is how many log lines a StartError or an ExitError
// carries (see logExcerpt).
const startFailureTail = 15

// Service is a started service: one process group whose leader toll forked.
// Its methods are safe for concurrent use.
type Service struct {
	// Spec is the spec the service was started from.
	Spec Spec
	// Started is when the process was forked.
	Started time.Time
	// ReadyAt is when the service was found ready.
	ReadyAt time.Time

	pid      int
	proc     procfs.FS
	logStart atomic.Int64 // size of the log file before the service started; 0 once capped

	done       chan struct{} // closed once the leader is reaped
	waitErr    error         // what cmd.Wait returned; written before done is closed
	exitedAt   time.Time     // when the leader was reaped; written before done is closed
	state      *os.ProcessState
	unexpected bool        // the exit came before Stop; written before done is closed
	stopping   atomic.Bool // Stop has begun: an exit from now on is expected

	stopMu  sync.Mutex
	stopped bool
	stopErr error
	killed  bool
}

// Start starts the service described by spec and waits until it is ready.
//
// The process runs in its own process group with Pdeathsig set to SIGKILL
// (or spec.DeathSignal).
// If it exits before it is ready, if readiness times out, if the address
// that answered readiness is held by a process outside the service's tree
// (an *OwnerError: another process holds the port), or if ctx is done
// first, Start kills the group and returns a *StartError that carries the
// reason and the end of the log. ctx only bounds the start: once Start has
// returned, the service runs until Stop.
func Start(ctx context.Context, spec Spec) (*Service, error) {
	return start(ctx, spec, nil)
}

// start is Start, where the readiness address may also be held by the
// process trees of others (the services started before it in its group).
func start(ctx context.Context, spec Spec, others []int) (*Service, error) {
	if err := spec.validate(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	proc, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	logFile, logStart, err := openLog(&spec)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: cmp.Or(spec.DeathSignal, syscall.SIGKILL)}

	s := &Service{Spec: spec, proc: proc, done: make(chan struct{})}
	s.logStart.Store(logStart)
	started := make(chan error, 1)
	go s.supervise(cmd, started)
	err = <-started
	logFile.Close() // the child holds its own copy
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	if limit := cmp.Or(spec.LogLimit, DefaultLogLimit); limit > 0 {
		go s.capLog(limit)
	}

	err = waitReady(ctx, spec.Ready, spec.logOpener(), logStart, s.done)
	if err == nil {
		// Readiness says something answers; make sure it is the service.
		err = checkOwner(ctx, proc, spec.Ready, s.pid, append(others, members(spec)...), spec.Forwarded)
	}
	if err != nil {
		select {
		case <-s.done:
			// A service that found its port taken exits; the holder is
			// the news, its exit the consequence.
			var oe *OwnerError
			if errors.As(err, &oe) {
				err = fmt.Errorf("%w; and the service %w", err, exitedBeforeReady(s.waitErr))
			} else {
				err = exitedBeforeReady(s.waitErr)
			}
		default:
		}
		stopErr := s.Stop(0)
		log, head := s.logExcerpt(startFailureTail)
		return nil, &StartError{Name: spec.Name, Err: errors.Join(err, stopErr), Log: log, LogHead: head}
	}
	s.ReadyAt = time.Now()
	return s, nil
}

// members returns the pids of spec's Members (see Spec.Members), or none
// where they cannot be read.
func members(spec Spec) []int {
	if len(spec.Members) == 0 {
		return nil
	}
	pids, err := cgroup.PidsIn(spec.Members)
	if err != nil {
		return nil
	}
	return pids
}

// supervise forks the service, reports the outcome of the fork on started,
// then waits for the process to exit and reaps it. It keeps its goroutine
// locked to the thread that forked for the life of the process, because
// Pdeathsig fires when that thread ends (see the package documentation).
func (s *Service) supervise(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	s.pid = cmd.Process.Pid
	s.Started = time.Now()
	started <- nil

	s.waitErr = cmd.Wait()
	s.exitedAt = time.Now()
	s.state = cmd.ProcessState
	s.unexpected = !s.stopping.Load()
	close(s.done)
}

// openLog opens spec's log for appending, creating it if needed, and its
// directory too when it is opened by its path, and returns the file with
// its size before this start.
func openLog(spec *Spec) (*os.File, int64, error) {
	if spec.OpenLog == nil {
		if err := os.MkdirAll(filepath.Dir(spec.LogPath), 0o755); err != nil {
			return nil, 0, fmt.Errorf("create log directory: %w", err)
		}
	}
	f, err := spec.logOpener()(os.O_WRONLY | os.O_APPEND | os.O_CREATE)
	if err != nil {
		return nil, 0, fmt.Errorf("open log: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("open log: %w", err)
	}
	return f, info.Size(), nil
}

// Pid returns the process id of the service, which is also its process
// group id.
func (s *Service) Pid() int { return s.pid }

// StartupTime returns the time from fork to ready.
func (s *Service) StartupTime() time.Duration { return s.ReadyAt.Sub(s.Started) }

// Exit returns when the process was reaped and its state (exit status and
// the resource usage of it and every descendant it reaped, from wait4);
// the zero time and nil before Done is closed.
func (s *Service) Exit() (time.Time, *os.ProcessState) {
	select {
	case <-s.done:
		return s.exitedAt, s.state
	default:
		return time.Time{}, nil
	}
}

// Done returns a channel that is closed when the process has exited and been
// reaped.
func (s *Service) Done() <-chan struct{} { return s.done }

// Ending reports whether the process has exited without having been
// reaped yet: its main thread is a zombie, or it has left /proc. A process
// killed with SIGKILL
// is reaped only once every one of its threads has ended, which for a
// process at idle priority on a busy machine can take a minute; until
// then Done stays open, and Ending already says it will close.
func (s *Service) Ending() bool {
	select {
	case <-s.done:
		return true
	default:
	}
	// A process whose threads are ending may already have left /proc
	// although it has not been reaped: either way it is gone.
	p, err := s.proc.Proc(s.pid)
	if err != nil {
		return true
	}
	st, err := p.Stat()
	return err != nil || st.State == "Z" || st.State == "X"
}

// ExitErr returns an *ExitError, which carries the end of the service's
// log, if the process exited on its own, before Stop was called, and nil
// otherwise. It is meaningful once Done is closed.
func (s *Service) ExitErr() error {
	select {
	case <-s.done:
		if s.unexpected {
			log, head := s.logExcerpt(startFailureTail)
			return &ExitError{Name: s.Spec.Name, Err: s.waitErr, Log: log, LogHead: head}
		}
		return nil
	default:
		return nil
	}
}

// capLog keeps the service's log under limit bytes until the service
// exits (see capLog).
func (s *Service) capLog(limit int64) {
	tick := time.NewTicker(logCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		if dropped, _ := capLog(s.Spec.logOpener(), limit); dropped > 0 {
			s.logStart.Store(0) // what was before this start is gone too
		}
	}
}

// LogTail returns up to the last n lines that the service wrote to its log
// since it started, or nil if the log cannot be read.
func (s *Service) LogTail(n int) []string {
	lines, err := tailLines(s.Spec.logOpener(), s.logStart.Load(), n)
	if err != nil {
		return nil
	}
	return lines
}

// logExcerpt returns up to n lines of what the service wrote to its log
// since it started, its first and its last, for an error (see logExcerpt),
// and how many are its first; nil if the log cannot be read.
func (s *Service) logExcerpt(n int) (lines []string, head int) {
	lines, head, err := logExcerpt(s.Spec.logOpener(), s.logStart.Load(), n)
	if err != nil {
		return nil, 0
	}
	return lines, head
}
