package profile

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// collapsed is async-profiler's output with its threads, ann and dot
// options, as a JVM with the OpenTelemetry agent writes it.
const collapsed = `[C2 CompilerThre tid=23596];start_thread;thread_native_entry;Thread::call_run;C2Compiler::compile_method 3
[GC Thread#0 tid=23590];start_thread;GangWorker::loop;G1ParTask::work 2
[http-nio-8080-exec-1 tid=23601];java.lang.Thread.run_[j];io.opentelemetry.sdk.trace.SdkSpan.end_[i];__GI___libc_write;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k] 5
[main tid=23563];Spin.main_[0] 7
`

func TestParseCollapsed(t *testing.T) {
	var got []Stack
	if err := parseCollapsed(strings.NewReader(collapsed), func(s Stack) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d stacks, want 4", len(got))
	}
	if s := got[0]; s.Thread != "C2 CompilerThre" || s.Count != 3 || s.Frames[0].Function != "C2Compiler::compile_method" || s.Frames[0].Module != "libjvm.so" {
		t.Errorf("a JIT thread's stack = %+v", s)
	}
	if s := got[1]; s.Thread != "GC Thread#0" {
		t.Errorf("a GC thread = %q", s.Thread)
	}
	s := got[2]
	want := []Frame{{Function: "do_syscall_64", Module: "[kernel.kallsyms]"}, {Function: "entry_SYSCALL_64_after_hwframe", Module: "[kernel.kallsyms]"},
		{Function: "__GI___libc_write", Module: "[native]"}, {Function: "io.opentelemetry.sdk.trace.SdkSpan.end", Module: "[java]"},
		{Function: "java.lang.Thread.run", Module: "[java]"}}
	if s.Thread != "http-nio-8080-exec-1" || len(s.Frames) != len(want) {
		t.Fatalf("stack = %+v, want thread http-nio-8080-exec-1 and %d frames, leaf first", s, len(want))
	}
	for i := range want {
		if s.Frames[i] != want[i] {
			t.Errorf("frame %d = %+v, want %+v", i, s.Frames[i], want[i])
		}
	}
	if f := got[3].Frames[0]; f.Function != "Spin.main" || f.Module != "[java]" {
		t.Errorf("an interpreted frame = %+v", f)
	}
	if err := parseCollapsed(strings.NewReader("[main tid=1];Spin.main\n"), func(Stack) {}); err == nil {
		t.Error("a line without its count parsed")
	}
}

// TestAsyncProfilerWindow checks that a session keeps the dumps whose
// second has its middle in the window, each under its second, and the
// CPU their samples stand for.
func TestAsyncProfilerWindow(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now().Add(-time.Minute).Truncate(time.Second)
	// Dumps end at t0+1s ... t0+6s, each with one more sample than the last.
	for i := 0; i < 6; i++ {
		name := filepath.Join(dir, "42."+strconv.Itoa(i)+".collapsed")
		if err := os.WriteFile(name, []byte("[main tid=1];Work.run_[j] "+strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		at := t0.Add(time.Duration(i+1) * time.Second)
		if err := os.Chtimes(name, at, at); err != nil {
			t.Fatal(err)
		}
	}
	a := AsyncProfiler{Lib: "unused", Interval: time.Millisecond}
	env := []string{"PATH=/bin", "JAVA_TOOL_OPTIONS=-javaagent:otel.jar"}
	for _, argv := range [][]string{{"/usr/bin/java", "-jar", "app.jar"}, {"sh", "-c", "exec java -cp x Hello"}} {
		gotArgv, gotEnv, ok := a.Prepare(argv, env, dir)
		last := gotEnv[len(gotEnv)-1]
		if !ok || !slices.Equal(gotArgv, argv) || len(gotEnv) != 3 || !strings.HasPrefix(last, "JAVA_TOOL_OPTIONS=-javaagent:otel.jar -agentpath:") ||
			!strings.Contains(last, "file="+dir+"/") {
			t.Errorf("Prepare(%q) = %q, %q, %v: want the agent added to JAVA_TOOL_OPTIONS", argv, gotArgv, gotEnv, ok)
		}
	}
	if _, _, ok := a.Prepare([]string{"python3", "app.py"}, env, dir); ok {
		t.Error("Prepare took a Python command for a JVM")
	}
	s, err := a.Start(context.Background(), Target{Service: "consumer", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The window [t0+1.2s, t0+4.2s) holds the middles of the chunks
	// ending at t0+2s, t0+3s and t0+4s: 2+3+4 samples.
	p, err := s.Stop(Window{Start: t0.Add(1200 * time.Millisecond), End: t0.Add(4200 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	var n, cpu int64
	seconds := map[int64]int64{}
	for _, smp := range p.Sample {
		n += smp.Value[0]
		cpu += smp.Value[1]
		seconds[smp.NumLabel[LabelSecond][0]] += smp.Value[0]
		if smp.Label[LabelService][0] != "consumer" || smp.Label[LabelThread][0] != "main" {
			t.Errorf("labels = %v", smp.Label)
		}
	}
	if n != 9 || cpu != 9*int64(time.Millisecond) {
		t.Errorf("%d samples, %d ns, want 9 and 9 ms", n, cpu)
	}
	if seconds[0] != 2 || seconds[1] != 3 || seconds[2] != 4 {
		t.Errorf("samples by second = %v, want 0:2 1:3 2:4", seconds)
	}
	left, _ := listDumps(dir)
	if len(left) != 1 || left[0].seq != 5 {
		t.Errorf("dumps left = %+v, want the last one only", left)
	}
}

// TestAsyncProfilerSamplesShareCPU checks that a session's samples stand
// for the CPU its service's threads ran, not for the interval asked: the
// CPU timer fires at the kernel's ticks, several intervals apart. The
// service is this test's process, which spins through the session.
func TestAsyncProfilerSamplesShareCPU(t *testing.T) {
	dir := t.TempDir()
	a := AsyncProfiler{Lib: "unused", Interval: time.Millisecond}
	s, err := a.Start(context.Background(), Target{Service: "svc", Dir: dir, Pids: []int{os.Getpid()}})
	if err != nil {
		t.Fatal(err)
	}
	start := s.(*asyncSession).start
	cpu0 := processCPU(t)
	for x := 0.0; time.Since(start) < 2050*time.Millisecond; x++ {
		_ = x * x
	}
	spent := processCPU(t) - cpu0
	// Ten samples a second of the session: far fewer than the 1,000
	// a millisecond's interval would take.
	for i, at := range []time.Duration{time.Second, 2 * time.Second, 3600 * time.Millisecond, 4600 * time.Millisecond} {
		name := filepath.Join(dir, "42."+strconv.Itoa(i)+".collapsed")
		if err := os.WriteFile(name, []byte("[main tid=1];Work.run_[j] 10\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, start.Add(at), start.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Stop(Window{Start: start, End: start.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	var n, cpu int64
	for _, smp := range p.Sample {
		n += smp.Value[0]
		cpu += smp.Value[1]
	}
	if ratio := float64(cpu) / float64(spent); n != 20 || ratio < 0.8 || ratio > 1.15 {
		t.Errorf("%d samples standing for %v of CPU; the process spent %v in the session (%.2f times): want 20 samples and about what it spent", n, time.Duration(cpu), spent, ratio)
	}
}

// processCPU returns the CPU this process has used, user and system.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
