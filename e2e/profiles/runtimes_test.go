package profiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/e2e/tolltest"
)

// repoFile returns the path of a file of this repository, or skips the
// test, saying how to get it, when it is not there.
func repoFile(t *testing.T, rel, how string) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find this test's directory")
	}
	path := filepath.Join(filepath.Dir(self), "..", "..", rel)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is missing (%s): %v", rel, how, err)
	}
	return path
}

// profiledRun runs scenario path profiled, with extra flags, and returns
// its results directory, its output and its only profile difference.
func profiledRun(t *testing.T, path string, flags ...string) (string, string, analyze.ProfileDiff) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, append([]string{"run", path, "--profile", "--out", out}, flags...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	tolltest.SkipIfInvalid(t, cmd.Run(), stdout.String(), stderr.String())
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Profiles []analyze.ProfileDiff }
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Profiles) != 1 {
		t.Fatalf("%d profile differences in summary.json, want 1\n%s\n%s", len(s.Profiles), stdout.String(), stderr.String())
	}
	return out, stdout.String(), s.Profiles[0]
}

// rowWith returns the first of rows whose name begins with prefix and
// that want accepts, or, when none does, the first whose name begins with
// prefix, for the failure message; ok says whether one was accepted.
// Several functions of one module can be sampled: an agent's function that
// the baseline lacks sits beside those both sides call.
func rowWith(rows []analyze.ProfileRow, prefix string, want func(analyze.ProfileRow) bool) (r analyze.ProfileRow, ok bool) {
	for _, row := range rows {
		if !strings.HasPrefix(row.Name, prefix) {
			continue
		}
		if want(row) {
			return row, true
		}
		if r.Name == "" {
			r = row
		}
	}
	return r, false
}

// sampled reports whether a function whose name begins with prefix is on
// the stacks of a profile of variant's trials in the results directory
// out.
func sampled(t *testing.T, out, variant, prefix string) bool {
	t.Helper()
	for _, tr := range tolltest.ReadTrials(t, out) {
		if tr.Variant != variant || tr.Profile == nil || tr.Profile.File == "" {
			continue
		}
		f, err := os.Open(filepath.Join(out, tr.Profile.File))
		if err != nil {
			t.Fatal(err)
		}
		p, err := pprof.Parse(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tr.Profile.File, err)
		}
		for _, fn := range p.Function {
			if strings.HasPrefix(fn.Name, prefix) {
				return true
			}
		}
	}
	return false
}

// agentOnly accepts a row that grew and the baseline lacks: an agent's own
// function.
func agentOnly(r analyze.ProfileRow) bool { return r.Delta > 0 && r.Baseline == 0 }

// TestProfileJVMAgent runs a JVM without and with the OpenTelemetry Java
// agent, profiled by async-profiler: the agent's difference must name
// its Java methods, and its origins must tell the agent's own code from
// the JVM's GC and JIT threads (each request leaves 1 MB of garbage in a
// young generation of 4 MB: the JVM collects dozens of times a second). The
// agent's own methods and the GC hold a few per cent of the samples, so
// the windows are long and busy enough (150 requests a second for 6 s)
// for each of them to draw tens of samples a run, not a handful: at 50 a
// second for 4 s a loaded machine left the agent's origin without one.
func TestProfileJVMAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real JVMs under load")
	}
	lib := repoFile(t, "examples/java/agents/libasyncProfiler.so", "examples/java/fetch-agents.sh fetches it")
	agent := repoFile(t, "examples/java/agents/opentelemetry-javaagent.jar", "examples/java/fetch-agents.sh fetches it")
	s := fmt.Sprintf(`name: jvm-profiled
services:
  - name: hello
    command: [sh, -c, "exec java -Xmx64m -Xmn4m -cp %s Hello ${port:hello} 600 1048576"]
    ready: {http: "http://127.0.0.1:${port:hello}/", timeout: 300s}
    measure: true
variants:
  - name: baseline
  - name: otel
    exports: true
    services:
      hello:
        env:
          JAVA_TOOL_OPTIONS: -javaagent:%s
          OTEL_SERVICE_NAME: hello
          OTEL_EXPORTER_OTLP_ENDPOINT: "${sink}"
          OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf
          OTEL_METRICS_EXPORTER: none
          OTEL_LOGS_EXPORTER: none
          OTEL_BSP_SCHEDULE_DELAY: "500"
          # Only the JDK's HTTP server is instrumented: the agent starts
          # in seconds rather than a minute on a busy machine.
          OTEL_INSTRUMENTATION_COMMON_DEFAULT_ENABLED: "false"
          OTEL_INSTRUMENTATION_JAVA_HTTP_SERVER_ENABLED: "true"
load:
  target: "http://127.0.0.1:${port:hello}"
  requests:
    - {name: hello, method: GET, path: /}
  rate: 150
  warmup: 2s
  duration: 6s
rounds: 2
`, tolltest.HelloClasses(t), agent)
	path := filepath.Join(t.TempDir(), "jvm.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stdout, d := profiledRun(t, path, "--async-profiler", lib)
	for _, tr := range tolltest.ReadTrials(t, out) {
		if tr.Profile == nil || tr.Profile.Profiler != "async-profiler" || tr.Profile.File == "" {
			t.Errorf("trial %s: profile %+v, want async-profiler's", tr.Variant, tr.Profile)
		}
	}
	// The charged rows: one per function that asked for work, where the
	// inclusive rows' largest fifty are mostly the frames above the
	// handler, and a JVM's few hundred samples a trial leave the agent's
	// methods out of them now and then.
	if r, ok := rowWith(d.Charged, "io.opentelemetry", agentOnly); !ok {
		t.Errorf("no io.opentelemetry method that grew and the baseline lacks (%+v) among %d charged rows\n%s", r, len(d.Charged), stdout)
	}
	origins := map[string]analyze.ProfileRow{}
	for _, r := range d.Origins {
		origins[r.Name] = r
	}
	for _, o := range []string{analyze.OriginAgent + "io.opentelemetry", analyze.OriginGC, analyze.OriginJIT, analyze.OriginApplication} {
		if r, ok := origins[o]; !ok || r.Variant <= 0 {
			t.Errorf("origin %q: %+v, want CPU on the agent's side; origins %+v", o, r, d.Origins)
		}
	}
	// The CPU timer fires at the kernel's ticks, not at each interval: the
	// samples must stand for the CPU the JVM ran, not for the interval
	// (counted so, they read about a quarter of it). The ticks draw a
	// hundred or more samples a window: a tenth either way is their
	// noise.
	measured := tolltest.ReadSummary(t, out).Value(t, "baseline", "cpu_per_request_ms")
	if ratio := d.Total.Baseline / measured; !(ratio >= 2.0/3 && ratio <= 1.5) {
		t.Errorf("baseline's profiled total %.3f ms per request is %.2f times its measured CPU per request %.3f ms, want 2/3 to 1.5\n%s",
			d.Total.Baseline, ratio, measured, stdout)
	}
}

// TestProfilePythonAgent runs the Flask example without and with
// opentelemetry-instrument, profiled by py-spy: both sides' stacks must
// name Flask's functions module:function, and the agent's difference
// the OpenTelemetry packages'. The profile is CPU per request: the
// baseline's profiled total must be of the order of the CPU per request
// its cgroup measured, not the time its threads spent runnable. Counting
// every thread py-spy does not judge idle counts those waiting for a
// CPU: on a busy machine, eight threads at 50 requests a second made the
// total many times the CPU (on a quiet one it came out near it, and this
// check cannot tell); the thread holding the GIL is counted when it
// waits for a CPU too, hence the bound of twice.
func TestProfilePythonAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	repoFile(t, "examples/python/.venv/bin/py-spy", "examples/python/setup.sh installs it")
	dir := filepath.Dir(repoFile(t, "examples/python/app.py", "part of the repository"))
	s := fmt.Sprintf(`name: python-profiled
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "2000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 30s}
  - name: consumer
    dir: %[1]s
    command: [.venv/bin/waitress-serve, --host=127.0.0.1, "--port=${port:consumer}", --threads=8, app:app]
    env:
      PROVIDER_URL: "http://127.0.0.1:${port:provider}/provider"
      WORK: "20000"
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 120s}
    measure: true
variants:
  - name: baseline
  - name: otel
    exports: true
    services:
      consumer:
        command: [.venv/bin/opentelemetry-instrument, .venv/bin/waitress-serve, --host=127.0.0.1,
                  "--port=${port:consumer}", --threads=8, app:app]
        env:
          OTEL_SERVICE_NAME: flask-consumer
          OTEL_TRACES_EXPORTER: otlp
          OTEL_METRICS_EXPORTER: none
          OTEL_LOGS_EXPORTER: none
          OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf
          OTEL_EXPORTER_OTLP_ENDPOINT: "${sink}"
          OTEL_BSP_SCHEDULE_DELAY: "500"
          OTEL_EXPERIMENTAL_RESOURCE_DETECTORS: otel
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {name: consumer, method: GET, path: /consumer}
  rate: 50
  warmup: 2s
  duration: 4s
rounds: 2
`, dir)
	path := filepath.Join(t.TempDir(), "python.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stdout, d := profiledRun(t, path)
	for _, tr := range tolltest.ReadTrials(t, out) {
		if tr.Profile == nil || tr.Profile.Profiler != "py-spy" || tr.Profile.File == "" {
			t.Errorf("trial %s: profile %+v, want py-spy's", tr.Variant, tr.Profile)
		}
	}
	// The application's own functions change little between the sides,
	// so the difference's largest rows need not hold them: each side's
	// profiles are read.
	for _, v := range []string{"baseline", "otel"} {
		if !sampled(t, out, v, "flask.") {
			t.Errorf("%s: no flask module:function on its profiles' stacks\n%s", v, stdout)
		}
	}
	if r, ok := rowWith(d.Inclusive, "opentelemetry.", agentOnly); !ok {
		t.Errorf("no opentelemetry module:function that grew and the baseline lacks (%+v)\n%s", r, stdout)
	}
	measured := tolltest.ReadSummary(t, out).Value(t, "baseline", "cpu_per_request_ms")
	ratio := d.Total.Baseline / measured
	t.Logf("baseline: profiled %.3f ms per request, measured %.3f ms: %.2f times", d.Total.Baseline, measured, ratio)
	// py-spy's samples share the CPU the service's threads ran: the
	// total is the service's CPU, however busy the machine.
	if !(ratio >= 0.8 && ratio <= 1.25) {
		t.Errorf("baseline's profiled total %.3f ms per request is %.2f times its measured CPU per request %.3f ms, want 0.8 to 1.25\n%s",
			d.Total.Baseline, ratio, measured, stdout)
	}
}

// jvmScenario writes a scenario of one profiled Hello JVM whose variant
// "other" runs variantCommand, and returns its path.
func jvmScenario(t *testing.T, variantCommand string) string {
	t.Helper()
	classes := tolltest.HelloClasses(t)
	s := fmt.Sprintf(`name: jvm-sides
services:
  - name: hello
    command: [sh, -c, "exec java -Xmx64m -cp %[1]s Hello ${port:hello} 600"]
    ready: {http: "http://127.0.0.1:${port:hello}/", timeout: 300s}
    measure: true
variants:
  - name: baseline
  - name: other
    services:
      hello:
        command: [sh, -c, "%[2]s"]
load:
  target: "http://127.0.0.1:${port:hello}"
  requests:
    - {name: hello, method: GET, path: /}
  rate: 20
  warmup: 1s
  duration: 3s
rounds: 1
`, classes, strings.ReplaceAll(variantCommand, "CLASSES", classes))
	path := filepath.Join(t.TempDir(), "jvm.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProfileOneSideMissing runs a JVM whose variant drops the
// JAVA_TOOL_OPTIONS that load async-profiler: that side has no samples,
// and the run must say so, and why, rather than compare a profile with
// nothing.
func TestProfileOneSideMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real JVMs under load")
	}
	lib := repoFile(t, "examples/java/agents/libasyncProfiler.so", "examples/java/fetch-agents.sh fetches it")
	path := jvmScenario(t, "unset JAVA_TOOL_OPTIONS; exec java -Xmx64m -cp CLASSES Hello ${port:hello} 600")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--profile", "--async-profiler", lib, "--out", filepath.Join(t.TempDir(), "out"))
	if code == 0 || !strings.Contains(stderr, "other at 20 req/s: no round with a profile of both it and the baseline") ||
		!strings.Contains(stderr, "async-profiler wrote no dump") {
		t.Errorf("exit %d, want an error saying variant other has no profile, and why\n%s\n%s", code, stdout, stderr)
	}
}

// TestProfileSidesNeedOneProfiler checks that a service a variant starts
// with another runtime's command is refused before anything starts: the
// two profilers' samples could not be compared.
func TestProfileSidesNeedOneProfiler(t *testing.T) {
	path := jvmScenario(t, "exec sleep 600")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--profile", "--async-profiler", "/nonexistent/libasyncProfiler.so",
		"--out", filepath.Join(t.TempDir(), "out"))
	if code == 0 || !strings.Contains(stderr, "sampled by async-profiler (variant baseline) but by perf (variant other)") {
		t.Errorf("exit %d, want a refusal naming both profilers\n%s\n%s", code, stdout, stderr)
	}
}
