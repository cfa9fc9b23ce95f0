// Package loadproc runs toll's load generator in a process of its own, at
// idle priority, for load that must not hold up the load toll measures
// with: the warm-up of a start beside the rounds. Sent from toll's own
// process, the warm-up's responses, read by the Go runtime's network
// poller, queued ahead of the pacer's wake-up for the trials' requests,
// which left up to 92 ms late at p99 beside three JVMs warming at four
// times the trials' rate; in a process at idle priority (SCHED_IDLE) the
// kernel preempts it whenever toll's generator wakes. Toll's `_load`
// command is that process (Serve); Run starts it and follows it.
package loadproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/pin"
)

// Spec is a load.Config that crosses to another process: its pacer by
// its arrival process and rate, without its callbacks.
type Spec struct {
	Requests []load.Request
	// Rate is the open model's rate, in requests per second, with Poisson
	// arrivals drawn from Seed when Poisson is set, uniform ones otherwise.
	Rate     float64
	Poisson  bool
	Seed     uint64
	Users    *load.Users
	Start    time.Time
	Warmup   time.Duration
	Duration time.Duration
	Timeout  time.Duration
	MaxConns int
	Quantum  time.Duration
	Lull     time.Duration
}

// SpecOf returns cfg as a Spec. Only a constant or a Poisson pacer can
// cross; OnSecond and Progress stay behind (Run follows the progress).
func SpecOf(cfg load.Config) (Spec, error) {
	s := Spec{Requests: cfg.Requests, Users: cfg.Users, Start: cfg.Start, Warmup: cfg.Warmup, Duration: cfg.Duration,
		Timeout: cfg.Timeout, MaxConns: cfg.MaxConns, Quantum: cfg.Quantum, Lull: cfg.Lull}
	switch p := cfg.Pacer.(type) {
	case nil:
	case load.ConstantPacer:
		s.Rate = p.Rate
	case *load.PoissonPacer:
		s.Rate, s.Poisson, s.Seed = p.Rate(), true, p.Seed()
	default:
		return Spec{}, fmt.Errorf("load in a process of its own: a %T pacer cannot cross to another process", p)
	}
	return s, nil
}

// Config returns the load.Config s describes.
func (s Spec) Config() load.Config {
	cfg := load.Config{Requests: s.Requests, Users: s.Users, Start: s.Start, Warmup: s.Warmup, Duration: s.Duration,
		Timeout: s.Timeout, MaxConns: s.MaxConns, Quantum: s.Quantum, Lull: s.Lull}
	switch {
	case s.Users != nil:
	case s.Poisson:
		cfg.Pacer = load.NewPoissonPacer(s.Rate, s.Seed)
	default:
		cfg.Pacer = load.ConstantPacer{Rate: s.Rate}
	}
	return cfg
}

// Outcome is what a load run in a process of its own ended with: the
// counts and the end of load.Result that a warm-up reads.
type Outcome struct {
	Sent, WarmupCompleted uint64
	MeasureEnd            time.Time
}

// line is one line the process writes: its requests completed so far, and
// last its outcome, with the load's error, if any.
type line struct {
	Completed uint64   `json:"completed"`
	Outcome   *Outcome `json:"outcome,omitempty"`
	Err       string   `json:"err,omitempty"`
}

// progressEvery is how often the process writes its progress: the rules
// that end a warm-up read it over spans of seconds.
const progressEvery = 20 * time.Millisecond

// Serve is the process's side: it reads a Spec from r, runs its load
// until it ends or ctx does, writes its progress to w every progressEvery
// and its outcome last, and returns the load's error.
func Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	var s Spec
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return fmt.Errorf("load in a process of its own: read its spec: %w", err)
	}
	cfg := s.Config()
	var done atomic.Uint64
	cfg.Progress = &done
	enc := json.NewEncoder(w)
	stop := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		last := uint64(0)
		for {
			select {
			case <-stop:
				wrote <- nil
				return
			case <-t.C:
				if n := done.Load(); n != last {
					last = n
					if err := enc.Encode(line{Completed: n}); err != nil {
						wrote <- err
						return
					}
				}
			}
		}
	}()
	res, err := load.Run(ctx, cfg)
	close(stop)
	werr := <-wrote
	out := line{Completed: done.Load()}
	if res != nil {
		out.Outcome = &Outcome{Sent: res.Sent, WarmupCompleted: res.WarmupCompleted, MeasureEnd: res.MeasureEnd}
	}
	if err != nil {
		out.Err = err.Error()
	}
	if werr == nil {
		werr = enc.Encode(out)
	}
	if werr != nil {
		return errors.Join(err, fmt.Errorf("load in a process of its own: write its progress: %w", werr))
	}
	return err
}

// stopGrace is how long the process has to write its outcome and exit
// once Run's ctx ends, before it is killed.
const stopGrace = 5 * time.Second

// Run runs spec's load in the process that argv starts (toll's `_load`,
// or anything that calls Serve on its standard input and output) with
// env, and returns its outcome; progress, when set, follows its count of
// requests completed. When ctx ends, the process is put back at normal
// priority (at idle priority on a busy machine it would get no CPU to end
// in), told to stop (SIGTERM), given stopGrace to write its outcome, then
// killed; Run then returns what it wrote with ctx's error. The process
// dies with the thread that started it (Pdeathsig), should toll die
// first.
func Run(ctx context.Context, argv, env []string, spec Spec, progress *atomic.Uint64) (*Outcome, error) {
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("load in a process of its own: %w", err)
	}
	// Pdeathsig fires when the thread that forked ends, not the process:
	// that thread is kept for the child's life.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(in)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr tail
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("load in a process of its own: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("load in a process of its own: %w", err)
	}
	ended := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = pin.SetPolicies(cmd.Process.Pid, nil, unix.SchedAttr{Policy: unix.SCHED_NORMAL})
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-ended:
			case <-time.After(stopGrace):
				_ = cmd.Process.Kill()
			}
		case <-ended:
		}
	}()
	var last line
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var l line
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		last = l
		if progress != nil {
			progress.Store(l.Completed)
		}
	}
	werr := cmd.Wait()
	close(ended)
	switch {
	case ctx.Err() != nil:
		return last.Outcome, fmt.Errorf("load in a process of its own: %w", ctx.Err())
	case last.Err != "":
		return last.Outcome, fmt.Errorf("load in a process of its own: %s", last.Err)
	case werr != nil:
		return last.Outcome, fmt.Errorf("load in a process of its own: %w: %s", werr, stderr.String())
	case last.Outcome == nil:
		return nil, fmt.Errorf("load in a process of its own: it ended without an outcome: %s", stderr.String())
	}
	return last.Outcome, nil
}

// tail keeps the last tailSize bytes written to it: the end of the
// process's standard error, for an error that names what went wrong.
type tail struct{ b []byte }

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailSize {
		t.b = t.b[len(t.b)-tailSize:]
	}
	return len(p), nil
}

func (t *tail) String() string { return strings.TrimSpace(string(t.b)) }
