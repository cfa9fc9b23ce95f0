package profile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// DefaultAsyncInterval is the CPU time between two of async-profiler's
// samples when AsyncProfiler.Interval is 0: about Perf's DefaultFrequency.
const DefaultAsyncInterval = 1003 * time.Microsecond

// asyncChunk is how often async-profiler dumps what it sampled (its loop
// option): a chunk is the finest part of a window it can be held to.
const asyncChunk = time.Second

// AsyncProfiler samples a JVM with async-profiler
// (https://github.com/async-profiler/async-profiler), which names Java
// frames (interpreted, compiled and inlined alike) where perf sees only
// the JIT's anonymous code. The profiler is loaded at the JVM's start
// (Prepare adds -agentpath to its JAVA_TOOL_OPTIONS; nothing attaches to
// the JVM later) and samples on-CPU time from then until the JVM exits
// with the process's CPU timer (event=itimer: a SIGPROF per interval of
// the JVM's CPU, user and system; no kernel frames). Its perf events
// (event=cpu) name kernel frames too, but one per thread is switched on
// and off at each of the thread's context switches: on this project's
// machine they added about a third to a Spring Boot service's CPU per
// request, the CPU timer about 7% (docs/benchmarks.md). The CPU timer is
// checked at the kernel's ticks only (4 ms apart at 250 Hz) and drops what
// it overran, so a sample does not stand for the interval asked: each
// stands for an equal share of the CPU the service's threads ran over the
// session (schedstat). async-profiler runs
// dumping its samples every second as a numbered file in collapsed form,
// one line per stack and thread. A session keeps the dumps whose second
// has its middle in the window: each window end is held to within half a
// second, alike for every variant.
type AsyncProfiler struct {
	// Lib is the path of libasyncProfiler.so (linux-x64, from the
	// tools.profiler:async-profiler jar on Maven Central).
	Lib string
	// Interval is the CPU time between samples; 0 is
	// DefaultAsyncInterval.
	Interval time.Duration
}

var _ Preparer = AsyncProfiler{}

func (a AsyncProfiler) interval() time.Duration {
	if a.Interval > 0 {
		return a.Interval
	}
	return DefaultAsyncInterval
}

// Name returns "async-profiler".
func (AsyncProfiler) Name() string { return "async-profiler" }

// Available reports why a cannot sample, or nil: its library is missing.
func (a AsyncProfiler) Available(context.Context) error {
	if a.Lib == "" {
		return errors.New("async-profiler: no library given (examples/java/fetch-agents.sh fetches it)")
	}
	if _, err := os.Stat(a.Lib); err != nil {
		return fmt.Errorf("async-profiler: %w (examples/java/fetch-agents.sh fetches it)", err)
	}
	return nil
}

// Prepare returns env with async-profiler loaded by JAVA_TOOL_OPTIONS
// (added to the value env has), so that the JVM argv starts, even through
// a shell, loads it at its start, writing its dumps into dir; false when
// argv starts no JVM (none of its words is a program named java).
func (a AsyncProfiler) Prepare(argv, env []string, dir string) ([]string, []string, bool) {
	if !startsJava(argv) {
		return argv, env, false
	}
	lib, err := filepath.Abs(a.Lib)
	if err != nil {
		lib = a.Lib
	}
	// threads: each stack under its thread's name, for GC and JIT
	// threads; ann: each frame marked Java, inlined or kernel; dot:
	// io.opentelemetry.sdk..., as the JVM names classes. Each JVM's
	// dumps are numbered under its process ID.
	opt := fmt.Sprintf("-agentpath:%s=start,event=itimer,interval=%d,loop=%ds,threads,ann,dot,collapsed,file=%s",
		lib, a.interval().Nanoseconds(), int(asyncChunk/time.Second), filepath.Join(dir, "%p.%n{1000000000}.collapsed"))
	const key = "JAVA_TOOL_OPTIONS="
	val := opt
	for i := len(env) - 1; i >= 0; i-- {
		if old, ok := strings.CutPrefix(env[i], key); ok {
			if old != "" {
				val = old + " " + opt
			}
			break
		}
	}
	return argv, append(slices.Clone(env), key+val), true
}

// startsJava reports whether one of argv's words, or of the words of a
// shell command among them, is a program named java.
func startsJava(argv []string) bool {
	for _, a := range argv {
		for _, w := range strings.Fields(a) {
			if filepath.Base(w) == "java" {
				return true
			}
		}
	}
	return false
}

// Start begins a session on t, whose Dir is the directory its JVM was
// prepared with.
func (a AsyncProfiler) Start(ctx context.Context, t Target) (Session, error) {
	if t.Dir == "" {
		return nil, fmt.Errorf("profile %s: async-profiler was not loaded at the service's start", t.Service)
	}
	return &asyncSession{a: a, target: t, ctx: ctx, start: time.Now(), sched: schedTimes(t.Pids)}, nil
}

// asyncSession reads a JVM's dumps once its window has ended.
type asyncSession struct {
	a      AsyncProfiler
	target Target
	ctx    context.Context
	start  time.Time // when the session started
	sched  sched     // the service's threads' times then
}

// asyncWait bounds how long Stop waits for the dump that ends after the
// window.
const asyncWait = 30 * time.Second

// asyncDump is one of async-profiler's dumps.
type asyncDump struct {
	path     string
	pid, seq int
	at       time.Time // when it was written: the end of its chunk
}

// Stop waits for a dump written after w ends, then returns the samples
// of the dumps whose chunk has its middle in w. It removes the dumps it
// has read, but each JVM's last, whose time starts its next chunk.
func (s *asyncSession) Stop(w Window) (*profile.Profile, error) {
	stopped := time.Now()
	ran := ranSince(s.sched, schedTimes(s.target.Pids))
	deadline := stopped.Add(asyncWait)
	var dumps []asyncDump
	for {
		var err error
		dumps, err = listDumps(s.target.Dir)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", s.target.Service, err)
		}
		if slices.ContainsFunc(dumps, func(d asyncDump) bool { return !d.at.Before(w.End.Add(asyncChunk / 2)) }) {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("profile %s: async-profiler wrote no dump in %s after the window (is the JVM running? its log says why)", s.target.Service, asyncWait)
		}
		select {
		case <-s.ctx.Done():
			return nil, fmt.Errorf("profile %s: %w", s.target.Service, s.ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Samples of the session's time, each dump's counted for the share
	// of its chunk inside it, and those of the window's chunks.
	var sessionSamples float64
	var window []Stack
	for i, d := range dumps {
		from := d.at.Add(-asyncChunk)
		if i > 0 && dumps[i-1].pid == d.pid {
			from = dumps[i-1].at
		}
		mid := from.Add(d.at.Sub(from) / 2)
		inWindow := !mid.Before(w.Start) && mid.Before(w.End)
		overlap := earlier(d.at, stopped).Sub(later(from, s.start))
		if !inWindow && overlap <= 0 {
			continue
		}
		f, err := os.Open(d.path)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", s.target.Service, err)
		}
		second := int64(mid.Sub(w.Start) / time.Second)
		var count int64
		err = parseCollapsed(f, func(st Stack) {
			count += st.Count
			if inWindow {
				st.Service, st.Second = s.target.Service, second
				window = append(window, st)
			}
		})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("profile %s: %s: %w", s.target.Service, d.path, err)
		}
		if overlap > 0 && d.at.After(from) {
			sessionSamples += float64(count) * min(1, float64(overlap)/float64(d.at.Sub(from)))
		}
	}
	// What one sample stands for: the CPU the JVM's threads ran over the
	// session shared among its samples. The CPU timer fires only at the
	// kernel's ticks (4 ms at 250 Hz) and drops what it overran, so a
	// sample is not the interval asked for.
	perSample := float64(s.a.interval().Nanoseconds())
	if ran > 0 && sessionSamples > 0 {
		perSample = float64(ran) / sessionSamples
	}
	b := newBuilder(s.a.interval().Nanoseconds())
	for _, st := range window {
		st.CPU = int64(float64(st.Count) * perSample)
		b.add(st)
	}
	for i, d := range dumps {
		if i+1 < len(dumps) && dumps[i+1].pid == d.pid {
			os.Remove(d.path) // the last of each JVM's stays
		}
	}
	p := b.profile()
	p.TimeNanos = w.Start.UnixNano()
	p.DurationNanos = w.End.Sub(w.Start).Nanoseconds()
	return p, nil
}

// earlier returns the earlier of a and b, later the later.
func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// listDumps returns the dumps in dir, in the order they were written.
func listDumps(dir string) ([]asyncDump, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var dumps []asyncDump
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".collapsed")
		if !ok {
			continue
		}
		p, n, ok := strings.Cut(name, ".")
		pid, err1 := strconv.Atoi(p)
		seq, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		dumps = append(dumps, asyncDump{path: filepath.Join(dir, e.Name()), pid: pid, seq: seq, at: info.ModTime()})
	}
	sort.Slice(dumps, func(i, j int) bool {
		if dumps[i].pid != dumps[j].pid {
			return dumps[i].pid < dumps[j].pid
		}
		return dumps[i].seq < dumps[j].seq
	})
	return dumps, nil
}

// parseCollapsed reads async-profiler's collapsed output with its threads
// and ann options: one line per stack, root first, frames separated by
// semicolons, its thread "[name tid=N]" first and its sample count last.
func parseCollapsed(r io.Reader, add func(Stack)) error {
	return scanFolded(r, func(names []string, count int64) {
		st := Stack{Count: count}
		if t := names[0]; strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			t = strings.TrimSuffix(strings.TrimPrefix(t, "["), "]")
			if i := strings.LastIndex(t, " tid="); i >= 0 {
				t = t[:i]
			}
			st.Thread = t
			names = names[1:]
		}
		for i := len(names) - 1; i >= 0; i-- {
			st.Frames = append(st.Frames, asyncFrame(names[i]))
		}
		add(st)
	})
}

// scanFolded reads folded stacks, the output of async-profiler's
// collapsed and py-spy's raw formats: one stack a line, its names root
// first separated by semicolons, then a space and its sample count. It
// calls stack with each line's names and count, and skips blank lines.
func scanFolded(r io.Reader, stack func(names []string, count int64)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		sp := strings.LastIndexByte(text, ' ')
		if sp < 0 {
			return fmt.Errorf("line %d: no sample count", line)
		}
		count, err := strconv.ParseInt(text[sp+1:], 10, 64)
		if err != nil {
			return fmt.Errorf("line %d: sample count: %w", line, err)
		}
		stack(strings.Split(text[:sp], ";"), count)
	}
	return sc.Err()
}

// asyncFrame names a frame of async-profiler's annotated output: Java
// code (_[j] compiled, _[i] inlined, _[0] interpreted, _[1] C1-compiled)
// in module "[java]", kernel code (_[k]) in [kernel.kallsyms], the JVM's
// own C++ code in libjvm.so, and other native code in "[native]".
func asyncFrame(name string) Frame {
	if i := strings.LastIndex(name, "_["); i > 0 && strings.HasSuffix(name, "]") {
		switch name[i+2 : len(name)-1] {
		case "k":
			return Frame{Function: name[:i], Module: "[kernel.kallsyms]"}
		case "j", "i", "0", "1":
			return Frame{Function: name[:i], Module: "[java]"}
		}
	}
	if strings.Contains(name, "::") {
		return Frame{Function: name, Module: "libjvm.so"}
	}
	return Frame{Function: name, Module: "[native]"}
}
