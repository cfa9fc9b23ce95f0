package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sys/unix"
)

// DefaultFrequency is the sampling rate, in samples per second of CPU, that
// Perf uses when none is given: a prime, so that sampling does not fall into
// step with a service's own periodic work.
const DefaultFrequency = 997

// Perf samples with Linux perf: perf record -e cpu-clock -F Frequency -g,
// on CLOCK_MONOTONIC so that samples can be held to a window; perf script
// reads them back. A service with a cgroup perf can watch is sampled
// through it (-a -G); otherwise every CPU is sampled (-a) and only the
// samples of the service's processes are kept. perf's per-process
// sampling (-p) would do the same for less data, but it switches the
// sampling on and off at each of the service's context switches, on the
// service's CPU: on this project's machine that added about a tenth to a
// Go service's CPU per request, where sampling every CPU added nothing
// measurable (docs/benchmarks.md). -p is used only where perf may not
// sample every CPU (kernel.perf_event_paranoid without CAP_PERFMON).
type Perf struct {
	// Path is perf's path; empty: "perf" from PATH.
	Path string
	// Frequency is the sampling rate in samples per second of CPU; 0 is
	// DefaultFrequency.
	Frequency int
	// Dir holds perf's data files while they are read; empty: the
	// system's temporary directory.
	Dir string
}

var _ Profiler = Perf{}

func (p Perf) path() string {
	if p.Path != "" {
		return p.Path
	}
	return "perf"
}

func (p Perf) frequency() int {
	if p.Frequency > 0 {
		return p.Frequency
	}
	return DefaultFrequency
}

// Name returns "perf".
func (Perf) Name() string { return "perf" }

// Available reports why p cannot sample on this machine, or nil: perf is
// missing, or the kernel refuses it the cpu-clock event.
func (p Perf) Available(ctx context.Context) error {
	path, err := exec.LookPath(p.path())
	if err != nil {
		return fmt.Errorf("perf not found (Debian: apt-get install linux-perf; scripts/install-test-deps.sh): %w", err)
	}
	f, err := os.CreateTemp(p.Dir, "toll-perf-check-*.data")
	if err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	f.Close()
	defer os.Remove(f.Name())
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "record", "-q", "-e", "cpu-clock", "-F", "99", "-g", "-o", f.Name(), "--", "true").CombinedOutput()
	if err != nil {
		return fmt.Errorf("perf record cannot sample cpu-clock here (kernel.perf_event_paranoid, or a container without CAP_PERFMON): %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Start begins perf record on t.
func (p Perf) Start(ctx context.Context, t Target) (Session, error) {
	if t.Cgroup == "" && len(t.Pids) == 0 {
		return nil, fmt.Errorf("profile %s: neither a cgroup nor processes to sample", t.Service)
	}
	if t.Cgroup != "" {
		return p.start(ctx, t, scopeCgroup)
	}
	s, err := p.start(ctx, t, scopeAll)
	if err != nil && ctx.Err() == nil {
		// Sampling every CPU needs CAP_PERFMON or a permissive
		// kernel.perf_event_paranoid; the service's own processes do not.
		s, err = p.start(ctx, t, scopeProcesses)
	}
	return s, err
}

// scope is what a perf record samples.
type scope int

const (
	scopeCgroup    scope = iota // the target's cgroup: -a -G
	scopeAll                    // every CPU, keeping the target's processes' samples: -a
	scopeProcesses              // the target's processes: -p
)

// start begins perf record on t, sampling what sc says.
func (p Perf) start(ctx context.Context, t Target, sc scope) (Session, error) {
	f, err := os.CreateTemp(p.Dir, "toll-perf-*.data")
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", t.Service, err)
	}
	f.Close()
	args := []string{"record", "-q", "-e", "cpu-clock", "-F", strconv.Itoa(p.frequency()), "-g",
		"-k", "CLOCK_MONOTONIC", "-o", f.Name(), "-D", "-1", "--control", "fd:3,4"}
	s := &perfSession{p: p, target: t, data: f.Name()}
	switch sc {
	case scopeCgroup:
		args = append(args, "-a", "-G", t.Cgroup)
	case scopeAll:
		args = append(args, "-a")
		s.pids = map[int]bool{}
		for _, pid := range t.Pids {
			s.pids[pid] = true
		}
	default:
		pids := make([]string, len(t.Pids))
		for i, pid := range t.Pids {
			pids[i] = strconv.Itoa(pid)
		}
		args = append(args, "-p", strings.Join(pids, ","))
	}
	s.cmd = exec.Command(p.path(), args...)
	s.cmd.Stdout = &s.stderr
	s.cmd.Stderr = &s.stderr
	// perf starts with its events off and turns them on when told to,
	// answering once they are: setting up takes seconds on a busy
	// machine, and Start returns only when samples are being taken.
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("profile %s: %w", t.Service, err)
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("profile %s: %w", t.Service, err)
	}
	// perf stops when its control descriptor closes: the write end stays
	// open until Stop.
	s.ctl = ctlW
	defer ackR.Close()
	s.cmd.ExtraFiles = []*os.File{ctlR, ackW}
	// The clocks are read together, so that a window's times convert to
	// the clock perf stamps its samples with.
	s.wall, s.mono = time.Now(), monotonic()
	err = s.cmd.Start()
	ctlR.Close()
	ackW.Close()
	if err != nil {
		ctlW.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("profile %s: start perf record: %w", t.Service, err)
	}
	s.done = make(chan struct{})
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.cmd.Process.Signal(syscall.SIGINT)
		case <-s.done:
		}
	}()
	if err := s.enable(ctx, ctlW, ackR); err != nil {
		ctlW.Close()
		s.cmd.Process.Kill()
		<-s.done
		os.Remove(f.Name())
		return nil, fmt.Errorf("profile %s: %w", t.Service, err)
	}
	return s, nil
}

// enableTimeout bounds how long perf record may take to start sampling.
const enableTimeout = 60 * time.Second

// enable tells perf record to start sampling, through its control
// descriptor ctl, and waits for its answer on ack.
func (s *perfSession) enable(ctx context.Context, ctl, ack *os.File) error {
	if _, err := ctl.WriteString("enable\n"); err != nil {
		return fmt.Errorf("perf record: enable: %w", err)
	}
	answered := make(chan error, 1)
	go func() {
		buf := make([]byte, 16)
		n, err := ack.Read(buf)
		if err == nil && !strings.HasPrefix(string(buf[:n]), "ack") {
			err = fmt.Errorf("answered %q", buf[:n])
		}
		answered <- err
	}()
	timer := time.NewTimer(enableTimeout)
	defer timer.Stop()
	select {
	case err := <-answered:
		if err != nil {
			<-s.done
			return fmt.Errorf("perf record did not start sampling: %w: %s", err, lastLines(s.stderr.String()))
		}
		return nil
	case <-s.done:
		return fmt.Errorf("perf record exited: %v: %s", s.waitErr, lastLines(s.stderr.String()))
	case <-timer.C:
		return fmt.Errorf("perf record did not start sampling within %s", enableTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// perfSession is one perf record.
type perfSession struct {
	p       Perf
	target  Target
	data    string
	cmd     *exec.Cmd
	ctl     *os.File // perf's control descriptor
	stderr  bytes.Buffer
	done    chan struct{}
	waitErr error
	wall    time.Time
	mono    int64 // CLOCK_MONOTONIC at wall, in nanoseconds
	// pids, when perf sampled every CPU, are the processes whose samples
	// are kept; nil keeps every sample.
	pids map[int]bool
}

// monotonic reads CLOCK_MONOTONIC in nanoseconds.
func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// stopGrace is how long perf record has to write its data once told to stop.
const stopGrace = 30 * time.Second

// Stop stops perf record and reads the samples of w.
func (s *perfSession) Stop(w Window) (*profile.Profile, error) {
	defer os.Remove(s.data)
	defer s.ctl.Close()
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(stopGrace):
		s.cmd.Process.Kill()
		<-s.done
		return nil, fmt.Errorf("profile %s: perf record did not stop within %s", s.target.Service, stopGrace)
	}
	var exit *exec.ExitError
	if s.waitErr != nil && !(errors.As(s.waitErr, &exit) && (exit.ExitCode() < 0 || exit.ExitCode() == 128+int(syscall.SIGINT))) {
		// Stopped by SIGINT, perf exits 0 or 130, or dies of the signal;
		// any other exit is a failure.
		return nil, fmt.Errorf("profile %s: perf record: %w: %s", s.target.Service, s.waitErr, lastLines(s.stderr.String()))
	}
	from := s.mono + w.Start.Sub(s.wall).Nanoseconds()
	to := s.mono + w.End.Sub(s.wall).Nanoseconds()
	b := newBuilder(int64(time.Second) / int64(s.p.frequency()))
	cmd := exec.Command(s.p.path(), "script", "-i", s.data, "-F", "comm,pid,tid,time,period,ip,sym,dso", "--ns", "--no-inline")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("profile %s: perf script: %w", s.target.Service, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("profile %s: perf script: %w", s.target.Service, err)
	}
	syms := goSymbols{}
	perr := parseScript(out, func(smp scriptSample) {
		if smp.ns < from || smp.ns >= to || (s.pids != nil && !s.pids[smp.pid]) {
			return
		}
		syms.name(smp.frames)
		b.add(Stack{Service: s.target.Service, Thread: smp.thread, Second: (smp.ns - from) / int64(time.Second),
			Frames: smp.frames, Count: 1, CPU: smp.period})
	})
	if perr != nil {
		cmd.Process.Kill()
	}
	werr := cmd.Wait()
	if perr != nil {
		return nil, fmt.Errorf("profile %s: %w", s.target.Service, perr)
	}
	if werr != nil {
		return nil, fmt.Errorf("profile %s: perf script: %w: %s", s.target.Service, werr, lastLines(errOut.String()))
	}
	p := b.profile()
	p.TimeNanos = w.Start.UnixNano()
	p.DurationNanos = w.End.Sub(w.Start).Nanoseconds()
	return p, nil
}

// lastLines returns the last few lines of a program's output, for an error.
func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "\n")
}
