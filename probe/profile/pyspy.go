package profile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	"github.com/prometheus/procfs"
)

// DefaultPySpyRate is the rate, in samples per second, at which PySpy
// samples when none is given: a prime, as Perf's.
const DefaultPySpyRate = 97

// PySpy samples a Python service with py-spy (https://github.com/benfred/py-spy),
// which reads the interpreter's own stacks from outside the process
// (process_vm_readv, no code in the service) and names Python frames
// module:function, where perf sees only the interpreter's C loop. It
// samples the service's first Python process and those it starts, in
// each the thread that holds the GIL (--gil), Rate times a second of
// wall-clock time, from the session's start to its stop: the time a
// function held the GIL, the CPU spent running Python code. Counting
// every thread py-spy does not judge idle would count those that wait
// for a CPU, several times the CPU on a busy machine; what runs without
// the GIL (C code that releases it, the kernel's side of system calls)
// is not counted as such. Counts of wall-clock samples are not CPU on a
// busy machine: a thread that holds the GIL while it waits for a CPU is
// counted, and py-spy misses samples while it waits itself (at load 4 on
// 2 cores, raw counts read from half to twice the CPU). So each sample
// stands for an equal share of the CPU the service's threads ran during
// the session (schedstat): the profile's total is the CPU the service
// used, and what ran without the GIL is spread over the functions in
// proportion to their samples. py-spy's counts carry no timestamps
// (its Chrome trace has them, but merges a thread's samples across the
// time it was idle): the session's samples are scaled to the window, the
// share of the sampled time the window is, and spread evenly over its
// seconds, on the premise that the service works at one pace through the
// load's warm-up and window.
type PySpy struct {
	// Path is py-spy's path; empty: py-spy beside the service's Python,
	// else from PATH.
	Path string
	// Rate is the sampling rate in samples per second; 0 is
	// DefaultPySpyRate.
	Rate int
	// Dir holds py-spy's output while it is read; empty: the system's
	// temporary directory.
	Dir string
}

var _ Preparer = PySpy{}

func (p PySpy) rate() int {
	if p.Rate > 0 {
		return p.Rate
	}
	return DefaultPySpyRate
}

// Name returns "py-spy".
func (PySpy) Name() string { return "py-spy" }

// Available reports why p cannot sample, or nil: py-spy is missing. With
// no Path, the check waits for the service's start.
func (p PySpy) Available(context.Context) error {
	if p.Path == "" {
		return nil
	}
	if _, err := exec.LookPath(p.Path); err != nil {
		return fmt.Errorf("py-spy not found (examples/python/setup.sh installs it in its venv): %w", err)
	}
	return nil
}

var pythonName = regexp.MustCompile(`^python[0-9.]*$`)

// Prepare returns argv and env unchanged and whether argv starts Python:
// its program is named python, or is a script whose #! line names it.
func (p PySpy) Prepare(argv, env []string, dir string) ([]string, []string, bool) {
	if len(argv) == 0 {
		return argv, env, false
	}
	if pythonName.MatchString(filepath.Base(argv[0])) {
		return argv, env, true
	}
	return argv, env, interpreter(argv[0]) != ""
}

// interpreter returns the Python interpreter script's #! line names, or "".
func interpreter(script string) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(io.LimitReader(f, 512)).ReadString('\n')
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if !strings.HasPrefix(line, "#!") || len(fields) == 0 {
		return ""
	}
	for _, f := range fields {
		if pythonName.MatchString(filepath.Base(f)) {
			return f
		}
	}
	return ""
}

// path returns the py-spy to run for a process whose executable is exe.
func (p PySpy) path(exe string) string {
	if p.Path != "" {
		return p.Path
	}
	if exe != "" {
		beside := filepath.Join(filepath.Dir(exe), "py-spy")
		if _, err := os.Stat(beside); err == nil {
			return beside
		}
	}
	return "py-spy"
}

// Start begins py-spy record on the first of t.Pids that runs Python.
func (p PySpy) Start(ctx context.Context, t Target) (Session, error) {
	pid, exe := 0, ""
	for _, id := range t.Pids {
		e, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", id))
		if err == nil && pythonName.MatchString(filepath.Base(e)) {
			pid, exe = id, e
			break
		}
	}
	if pid == 0 {
		return nil, fmt.Errorf("profile %s: none of its processes %v runs Python", t.Service, t.Pids)
	}
	// py-spy's own venv's bin holds it; a venv's python is a link to the
	// system's, so look beside the link first.
	venvExe := ""
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		if first, _, _ := bytes.Cut(cmdline, []byte{0}); filepath.IsAbs(string(first)) {
			venvExe = string(first)
		}
	}
	path := p.path(venvExe)
	if path == "py-spy" {
		path = p.path(exe)
	}
	f, err := os.CreateTemp(p.Dir, "toll-py-spy-*.json")
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", t.Service, err)
	}
	f.Close()
	s := &pySpySession{p: p, target: t, out: f.Name(), sched: schedTimes(t.Pids)}
	s.cmd = exec.Command(path, "record", "--pid", strconv.Itoa(pid), "--rate", strconv.Itoa(p.rate()),
		"--format", "raw", "--full-filenames", "--output", f.Name(), "--nonblocking", "--threads", "--subprocesses", "--gil")
	s.cmd.Stdout = &s.stderr
	s.cmd.Stderr = &s.stderr
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("profile %s: start py-spy: %w", t.Service, err)
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
	return s, nil
}

// pySpySession is one py-spy record.
type pySpySession struct {
	p       PySpy
	target  Target
	out     string
	cmd     *exec.Cmd
	stderr  stampedBuffer
	done    chan struct{}
	waitErr error
	start   time.Time // when py-spy was started
	sched   sched     // the service's threads' times when it was
}

// sched is how long each thread of a set of processes has run, in
// nanoseconds (/proc/PID/task/TID/schedstat), by thread id.
type sched map[int]uint64

// schedTimes reads the schedstat of every thread of pids alive now.
func schedTimes(pids []int) sched {
	s := sched{}
	for _, pid := range pids {
		threads, err := procfs.AllThreads(pid)
		if err != nil {
			continue // exited
		}
		for _, t := range threads {
			if st, err := t.Schedstat(); err == nil {
				s[t.PID] = st.RunningNanoseconds
			}
		}
	}
	return s
}

// ranSince is how long the threads of later ran since s, in nanoseconds
// (a thread absent from s counted since its start).
func ranSince(s, later sched) uint64 {
	var run uint64
	for tid, l := range later {
		if e := s[tid]; l >= e {
			run += l - e
		}
	}
	return run
}

// stampedBuffer is a program's output and when it first wrote: py-spy
// says it samples once it has attached.
// (Not an embedded bytes.Buffer: io.Copy would write through its
// ReadFrom.)
type stampedBuffer struct {
	buf   bytes.Buffer
	first time.Time
}

// Write implements io.Writer.
func (b *stampedBuffer) Write(p []byte) (int, error) {
	if b.first.IsZero() {
		b.first = time.Now()
	}
	return b.buf.Write(p)
}

// String returns what was written.
func (b *stampedBuffer) String() string { return b.buf.String() }

// Stop stops py-spy and reads the samples of w.
func (s *pySpySession) Stop(w Window) (*profile.Profile, error) {
	defer os.Remove(s.out)
	ran := ranSince(s.sched, schedTimes(s.target.Pids))
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(stopGrace):
		s.cmd.Process.Kill()
		<-s.done
		return nil, fmt.Errorf("profile %s: py-spy did not stop within %s", s.target.Service, stopGrace)
	}
	var exit *exec.ExitError
	if s.waitErr != nil && !(errors.As(s.waitErr, &exit) && exit.ExitCode() < 0) {
		return nil, fmt.Errorf("profile %s: py-spy: %w: %s", s.target.Service, s.waitErr, lastLines(s.stderr.String()))
	}
	data, err := os.ReadFile(s.out)
	if err != nil || len(data) == 0 {
		return nil, fmt.Errorf("profile %s: py-spy wrote no samples: %v: %s", s.target.Service, err, lastLines(s.stderr.String()))
	}
	stopped, started := time.Now(), s.start
	if strings.Contains(s.stderr.String(), "Sampling process") && !s.stderr.first.IsZero() {
		started = s.stderr.first // its first words, once attached
	}
	period := int64(time.Second) / int64(s.p.rate())
	b := newBuilder(period)
	span, win := stopped.Sub(started), w.End.Sub(w.Start)
	if span <= 0 || win <= 0 {
		return nil, fmt.Errorf("profile %s: py-spy sampled for %s, the window is %s", s.target.Service, span, win)
	}
	// The window's share of the sampled time, spread over its seconds,
	// the last one possibly partial.
	seconds := int64((win + time.Second - 1) / time.Second)
	share := func(sec int64) float64 {
		return float64(min(win-time.Duration(sec)*time.Second, time.Second)) / float64(span)
	}
	var stacks []Stack
	var samples int64
	if err := parseRaw(bytes.NewReader(data), func(st Stack) {
		stacks = append(stacks, st)
		samples += st.Count
	}); err != nil {
		return nil, fmt.Errorf("profile %s: py-spy's output: %w", s.target.Service, err)
	}
	perSample := float64(period) // CPU a sample stands for, in ns
	if ran > 0 && samples > 0 {
		perSample = float64(ran) / float64(samples)
	}
	for _, st := range stacks {
		st.Service = s.target.Service
		n := st.Count
		for sec := int64(0); sec < seconds; sec++ {
			c := float64(n) * share(sec)
			st.Second, st.Count, st.CPU = sec, int64(math.Round(c)), int64(c*perSample)
			b.add(st)
		}
	}
	p := b.profile()
	p.TimeNanos = w.Start.UnixNano()
	p.DurationNanos = w.End.Sub(w.Start).Nanoseconds()
	return p, nil
}

// parseRaw reads py-spy's raw output (--threads --subprocesses): one
// line per stack, root first, frames "function (file:line)" separated by
// semicolons after its process and its thread, and its sample count last.
func parseRaw(r io.Reader, add func(Stack)) error {
	return scanFolded(r, func(names []string, count int64) {
		st := Stack{Count: count}
		for len(names) > 0 && (strings.HasPrefix(names[0], "process ") || strings.HasPrefix(names[0], "thread (")) {
			if strings.HasPrefix(names[0], "thread (") {
				st.Thread = names[0]
			}
			names = names[1:]
		}
		for i := len(names) - 1; i >= 0; i-- {
			fn, file := names[i], ""
			if j := strings.LastIndex(fn, " ("); j > 0 && strings.HasSuffix(fn, ")") {
				fn, file = fn[:j], fn[j+2:len(fn)-1]
				if k := strings.LastIndexByte(file, ':'); k > 0 {
					file = file[:k]
				}
			}
			st.Frames = append(st.Frames, pythonFrame(fn, file))
		}
		add(st)
	})
}

// pythonFrame names a Python function module:function, its module from
// its file's path: flask.app for .../site-packages/flask/app.py, or for
// flask/app.py, as py-spy shortens a package's path.
func pythonFrame(function, file string) Frame {
	if file == "" {
		return Frame{Function: function, Module: "[python]"}
	}
	mod := strings.TrimSuffix(file, ".py")
	if i := strings.LastIndex(mod, "-packages/"); i >= 0 {
		mod = mod[i+len("-packages/"):]
	} else if i := strings.Index(mod, "/lib/python"); i >= 0 {
		// The standard library: .../lib/python3.12/json/decoder.py.
		rest := mod[i+len("/lib/python"):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			mod = rest[j+1:]
		}
	} else if filepath.IsAbs(mod) {
		mod = filepath.Base(mod)
	}
	mod = strings.TrimSuffix(strings.ReplaceAll(mod, "/", "."), ".__init__")
	return Frame{Function: mod + ":" + function, Module: file}
}
