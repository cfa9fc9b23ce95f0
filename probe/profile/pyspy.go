package profile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
)

// DefaultPySpyRate is the rate, in samples per second, at which PySpy
// samples when none is given: a prime, as Perf's.
const DefaultPySpyRate = 97

// PySpy samples a Python service with py-spy (https://github.com/benfred/py-spy),
// which reads the interpreter's own stacks from outside the process
// (process_vm_readv, no code in the service) and names Python frames
// module:function, where perf sees only the interpreter's C loop. It
// samples the service's first Python process and those it starts, each
// thread that is not idle, Rate times a second of wall-clock time, and
// writes its samples as a Chrome trace, whose timestamps hold the samples
// to the window.
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
	s := &pySpySession{p: p, target: t, out: f.Name()}
	s.cmd = exec.Command(path, "record", "--pid", strconv.Itoa(pid), "--rate", strconv.Itoa(p.rate()),
		"--format", "chrometrace", "--output", f.Name(), "--nonblocking", "--threads", "--subprocesses")
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
	stderr  bytes.Buffer
	done    chan struct{}
	waitErr error
	start   time.Time // py-spy's time 0, within its own start-up
}

// Stop stops py-spy and reads the samples of w.
func (s *pySpySession) Stop(w Window) (*profile.Profile, error) {
	defer os.Remove(s.out)
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
	period := int64(time.Second) / int64(s.p.rate())
	b := newBuilder(period)
	if err := parseChromeTrace(bytes.NewReader(data), s.start, w, period, func(st Stack) {
		st.Service = s.target.Service
		b.add(st)
	}); err != nil {
		return nil, fmt.Errorf("profile %s: py-spy's trace: %w", s.target.Service, err)
	}
	p := b.profile()
	p.TimeNanos = w.Start.UnixNano()
	p.DurationNanos = w.End.Sub(w.Start).Nanoseconds()
	return p, nil
}

// traceEvent is one event of py-spy's Chrome trace: a frame that begins
// (ph B) or ends (E) on a thread, at ts microseconds from py-spy's start.
type traceEvent struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Tid  int64   `json:"tid"`
	Ts   float64 `json:"ts"`
	Args struct {
		Filename string `json:"filename"`
	} `json:"args"`
}

// parseChromeTrace reads py-spy's Chrome trace, whose timestamps count
// from start, and adds the stacks it held within w: each span in which a
// thread's stack stayed the same, cut at w's ends and at its whole
// seconds, as the CPU time it lasted (py-spy samples only threads that
// are not idle) and the samples taken every period in it.
func parseChromeTrace(r io.Reader, start time.Time, w Window, period int64, add func(Stack)) error {
	var events []traceEvent
	if err := json.NewDecoder(r).Decode(&events); err != nil {
		return err
	}
	from := w.Start.Sub(start).Nanoseconds()
	to := w.End.Sub(start).Nanoseconds()
	type thread struct {
		frames []Frame // root first
		name   string
		since  int64
	}
	threads := map[int64]*thread{}
	flush := func(th *thread, now int64) {
		a, z := max(th.since, from), min(now, to)
		for a < z {
			second := (a - from) / int64(time.Second)
			end := min(z, from+(second+1)*int64(time.Second))
			var st Stack
			for i := len(th.frames) - 1; i >= 0; i-- {
				st.Frames = append(st.Frames, th.frames[i])
			}
			if len(st.Frames) > 0 {
				st.Thread, st.Second, st.CPU = th.name, second, end-a
				st.Count = int64(math.Round(float64(end-a) / float64(period)))
				add(st)
			}
			a = end
		}
	}
	for _, e := range events {
		now := int64(e.Ts * 1000)
		th := threads[e.Tid]
		if th == nil {
			th = &thread{since: now}
			threads[e.Tid] = th
		}
		flush(th, now)
		th.since = now
		switch {
		case strings.HasPrefix(e.Name, "process ") && e.Args.Filename == "":
		case strings.HasPrefix(e.Name, "thread ") && e.Args.Filename == "":
			if e.Ph == "B" {
				th.name = e.Name
			}
		case e.Ph == "B":
			th.frames = append(th.frames, pythonFrame(e.Name, e.Args.Filename))
		case e.Ph == "E":
			if n := len(th.frames); n > 0 {
				th.frames = th.frames[:n-1]
			}
		}
	}
	return nil
}

// pythonFrame names a Python function module:function, its module from
// its file's path: flask.app for .../site-packages/flask/app.py.
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
	} else {
		mod = filepath.Base(mod)
	}
	mod = strings.TrimSuffix(strings.ReplaceAll(mod, "/", "."), ".__init__")
	return Frame{Function: mod + ":" + function, Module: file}
}
