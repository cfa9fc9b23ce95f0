package sink

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/netns"
)

// The live tests run real Java agents against the sink: a small Java
// program serving HTTP is started with -javaagent, the test sends it a few
// requests on loopback, and the sink must count what the agent exported,
// reject nothing, and have answered every call the agent made.
//
// The agent jars come from examples/java/fetch-agents.sh (which puts them
// in examples/java/agents/) or, failing that, from the local Maven
// repository (mvn dependency:copy leaves them there). Without them, or
// without a JDK, the tests skip.
//
// When the test can create a network namespace (root), it runs again in
// one that holds only loopback, so nothing an agent does can leave the
// machine; otherwise it runs on the host, with every agent's cloud probes,
// remote configuration and self-telemetry off.

// liveNetNSEnv marks a test process re-run in a network namespace.
const liveNetNSEnv = "TOLL_TEST_SINK_NETNS"

// liveRequests is the number of requests the test sends to the Java
// program; each makes the program call itself once more.
const liveRequests = 20

// javaAgent is an agent jar the live tests run.
type javaAgent struct {
	name  string   // in messages
	globs []string // file names in examples/java/agents/
	maven []string // path in the local Maven repository
}

// The agents under test, at the versions the Java examples pin.
func liveAgents() map[string]javaAgent {
	return map[string]javaAgent{
		"elastic": {"Elastic APM agent 1.55.1", []string{"elastic-apm-agent*.jar"},
			[]string{"co", "elastic", "apm", "elastic-apm-agent", "1.55.1", "elastic-apm-agent-1.55.1.jar"}},
		"datadog": {"Datadog Java tracer 1.68.1", []string{"dd-java-agent*.jar"},
			[]string{"com", "datadoghq", "dd-java-agent", "1.68.1", "dd-java-agent-1.68.1.jar"}},
		"pyroscope": {"Pyroscope Java agent 2.9.2", []string{"*pyroscope*.jar", "agent-2.9.2.jar"},
			[]string{"io", "pyroscope", "agent", "2.9.2", "agent-2.9.2.jar"}},
	}
}

// agentJar returns the absolute path of agent's jar, and false when it is
// nowhere to be found.
func agentJar(agent javaAgent) (string, bool) {
	dir := filepath.Join("..", "examples", "java", "agents")
	for _, g := range agent.globs {
		if m, _ := filepath.Glob(filepath.Join(dir, g)); len(m) > 0 {
			slices.Sort(m)
			if abs, err := filepath.Abs(m[len(m)-1]); err == nil {
				return abs, true
			}
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(append([]string{home, ".m2", "repository"}, agent.maven...)...)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// fetchHint tells how to get the agent jars.
const fetchHint = "run examples/java/fetch-agents.sh"

// liveApp is the Java program the agents instrument: an HTTP server whose
// /front calls /back on itself with HttpURLConnection, so that an agent
// sees server requests (Elastic transactions) and an outgoing call (a
// client span for both Elastic and Datadog). Handlers are classes, not
// lambdas, which agents cannot instrument.
const liveApp = `import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.util.concurrent.Executors;

public class LiveApp {
  static int port;

  static final class Handler implements HttpHandler {
    @Override
    public void handle(HttpExchange ex) throws IOException {
      if (ex.getRequestURI().getPath().equals("/front")) {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + "/back").openConnection();
        try (InputStream in = c.getInputStream()) {
          in.readAllBytes();
        }
      }
      byte[] body = "ok\n".getBytes();
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    s.createContext("/", new Handler());
    s.setExecutor(Executors.newFixedThreadPool(4));
    s.start();
    port = s.getAddress().getPort();
    System.out.println("listening on " + port);
  }
}
`

// compileLiveApp compiles liveApp into a temporary directory and returns
// it, skipping the test without a JDK.
func compileLiveApp(t *testing.T) string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no javac (a JDK) to compile the program the agents instrument")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "LiveApp.java")
	if err := os.WriteFile(src, []byte(liveApp), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(javac, "-d", dir, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return dir
}

// call is one request an agent made, as the sink answered it.
type call struct {
	method, path, encoding string
	status                 int
}

// String formats c for the test log.
func (c call) String() string {
	s := c.method + " " + c.path
	if c.encoding != "" {
		s += " (" + c.encoding + ")"
	}
	return s + " → " + strconv.Itoa(c.status)
}

// callLog records the calls a sink answered.
type callLog struct {
	mu    sync.Mutex
	calls []call
}

// observe is a Sink.observe function.
func (l *callLog) observe(r *http.Request, status int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call{r.Method, r.URL.Path, r.Header.Get("Content-Encoding"), status})
}

// summary returns each distinct call with how often it was made.
func (l *callLog) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := map[string]int{}
	for _, c := range l.calls {
		n[c.String()]++
	}
	var out []string
	for s, k := range n {
		out = append(out, fmt.Sprintf("%s ×%d", s, k))
	}
	slices.Sort(out)
	return out
}

// has reports whether some call matched f.
func (l *callLog) has(f func(call) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.calls, f)
}

// lockedBuffer is a bytes.Buffer safe for the JVM's two output streams.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// liveCase is one run of an agent against a sink.
type liveCase struct {
	name  string
	agent string // key of liveAgents
	addr  string // the sink's listen address
	env   func(sinkURL string) []string
	// done reports whether the sink has counted all that is expected; the
	// test waits for it, then checks.
	done  func(Counts) bool
	check func(t *testing.T, c Counts, calls *callLog)
}

// TestJavaAgentsLive runs each real agent against the sink.
func TestJavaAgentsLive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs with real agents; skipped in -short")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java to run the agents")
	}
	agents := liveAgents()
	if !slices.ContainsFunc(slices.Collect(maps.Values(agents)), func(a javaAgent) bool {
		_, ok := agentJar(a)
		return ok
	}) {
		t.Skip("no agent jar in examples/java/agents/ or the local Maven repository: " + fetchHint)
	}
	if os.Getenv(liveNetNSEnv) == "" {
		if inNetNS(t) {
			return
		}
	} else if err := netns.Setup(); err != nil {
		t.Fatalf("set up the test's network namespace: %v", err)
	}
	app := compileLiveApp(t)

	noElasticProbes := func(url string) []string {
		return []string{"ELASTIC_APM_SERVER_URL=" + url, "ELASTIC_APM_SERVICE_NAME=toll-live",
			"ELASTIC_APM_CLOUD_PROVIDER=none", "ELASTIC_APM_API_REQUEST_TIME=1s", "ELASTIC_APM_METRICS_INTERVAL=1s",
			"ELASTIC_APM_LOG_LEVEL=warn"}
	}
	noDatadogProbes := func(url string) []string {
		return []string{"DD_TRACE_AGENT_URL=" + url, "DD_SERVICE=toll-live", "DD_TRACE_FLUSH_INTERVAL=1",
			"DD_REMOTE_CONFIGURATION_ENABLED=false", "DD_JMXFETCH_ENABLED=false", "DD_RUNTIME_METRICS_ENABLED=false",
			"DD_PROFILING_ENABLED=false", "DD_TRACE_STARTUP_LOGS=false", "DD_CRASHTRACKING_ENABLED=false"}
	}
	// Every request to /front makes 3 Elastic spans (the /front and /back
	// transactions, the outgoing call's span), and 1 Datadog span: the
	// Datadog tracer instruments HttpURLConnection but not the JDK's
	// built-in HTTP server.
	tests := []liveCase{
		{
			name: "elastic", agent: "elastic", addr: "127.0.0.1:0",
			env: func(url string) []string {
				return append(noElasticProbes(url), "ELASTIC_APM_CENTRAL_CONFIG=false")
			},
			done: func(c Counts) bool { return c.Spans >= 3*liveRequests && c.MetricPoints > 0 },
			check: func(t *testing.T, c Counts, calls *callLog) {
				if c.Spans != 3*liveRequests {
					t.Errorf("spans = %d, want %d (2 transactions and 1 span per request)", c.Spans, 3*liveRequests)
				}
				if !calls.has(func(c call) bool { return c.path == "/" && c.status == 200 }) {
					t.Error("the agent did not ask for the server information, or was not answered 200")
				}
			},
		},
		{
			// The agent deflates its events unless the server is on
			// localhost or 127.0.0.1, and polls central configuration.
			name: "elastic deflate and central config", agent: "elastic", addr: "127.0.0.2:0",
			env:  noElasticProbes,
			done: func(c Counts) bool { return c.Spans >= 3*liveRequests && c.MetricPoints > 0 },
			check: func(t *testing.T, c Counts, calls *callLog) {
				if c.Spans != 3*liveRequests {
					t.Errorf("spans = %d, want %d", c.Spans, 3*liveRequests)
				}
				if !calls.has(func(c call) bool { return c.path == "/intake/v2/events" && c.encoding == "deflate" }) {
					t.Error("no deflate-encoded intake request")
				}
				if !calls.has(func(c call) bool { return c.path == "/config/v1/agents" && c.status == 200 }) {
					t.Error("the agent did not poll central configuration, or was not answered 200")
				}
			},
		},
		{
			name: "datadog v0.4", agent: "datadog", addr: "127.0.0.1:0",
			env: func(url string) []string {
				return append(noDatadogProbes(url), "DD_INSTRUMENTATION_TELEMETRY_ENABLED=false")
			},
			done: func(c Counts) bool { return c.Spans >= liveRequests },
			check: func(t *testing.T, c Counts, calls *callLog) {
				if c.Spans != liveRequests {
					t.Errorf("spans = %d, want %d (the outgoing call of each request)", c.Spans, liveRequests)
				}
				if !calls.has(func(c call) bool { return c.path == "/v0.4/traces" && c.status == 200 }) {
					t.Error("no trace payload on /v0.4/traces")
				}
			},
		},
		{
			// v0.5 is offered by the sink and chosen by the tracer when
			// enabled; the tracer's own telemetry goes to the proxy.
			name: "datadog v0.5 and telemetry", agent: "datadog", addr: "127.0.0.1:0",
			env: func(url string) []string {
				return append(noDatadogProbes(url), "DD_TRACE_AGENT_V0_5_ENABLED=true")
			},
			done: func(c Counts) bool { return c.Spans >= liveRequests },
			check: func(t *testing.T, c Counts, calls *callLog) {
				if c.Spans != liveRequests {
					t.Errorf("spans = %d, want %d", c.Spans, liveRequests)
				}
				if !calls.has(func(c call) bool { return c.path == "/v0.5/traces" && c.status == 200 }) {
					t.Error("no trace payload on /v0.5/traces")
				}
				if calls.has(func(c call) bool { return c.path == "/v0.4/traces" }) {
					t.Error("the tracer used /v0.4/traces though v0.5 was enabled and offered")
				}
			},
		},
		{
			name: "pyroscope", agent: "pyroscope", addr: "127.0.0.1:0",
			env: func(url string) []string {
				return []string{"PYROSCOPE_SERVER_ADDRESS=" + url, "PYROSCOPE_APPLICATION_NAME=toll-live",
					"PYROSCOPE_UPLOAD_INTERVAL=1s", "PYROSCOPE_LOG_LEVEL=info"}
			},
			done: func(c Counts) bool { return c.Profiles >= 2 },
			check: func(t *testing.T, c Counts, calls *callLog) {
				if c.Spans != 0 || c.MetricPoints != 0 || c.LogRecords != 0 {
					t.Errorf("a profiler's uploads counted as spans, points or logs: %+v", c)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jar, ok := agentJar(agents[tt.agent])
			if !ok {
				t.Skipf("no %s jar in examples/java/agents/ or the local Maven repository: %s", agents[tt.agent].name, fetchHint)
			}
			runLive(t, java, app, jar, tt)
		})
	}
}

// runLive starts a sink and the Java program with the agent, sends it
// liveRequests requests, waits until the sink has counted what tt expects
// (or a minute), and checks the counts.
func runLive(t *testing.T, java, app, jar string, tt liveCase) {
	calls := &callLog{}
	s := New()
	s.observe = calls.observe
	if err := s.Start(tt.addr); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, java, "-javaagent:"+jar, "-Xmx256m", "-XX:+UseSerialGC", "-cp", app, "LiveApp")
	cmd.Env = append(os.Environ(), tt.env(s.URL())...)
	var out lockedBuffer
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start java: %v", err)
	}
	started := time.Now()
	exited := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	port := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(&out, line)
			if p, ok := strings.CutPrefix(line, "listening on "); ok {
				port <- p
			}
		}
		_ = cmd.Wait()
	}()
	defer func() {
		if t.Failed() {
			t.Logf("JVM output:\n%s", out.String())
		}
	}()

	var appURL string
	select {
	case p := <-port:
		appURL = "http://127.0.0.1:" + p
	case <-exited:
		t.Fatal("the JVM exited before listening")
	case <-ctx.Done():
		t.Fatal("the JVM did not start listening in time")
	}
	t.Logf("JVM with %s listening after %v", filepath.Base(jar), time.Since(started).Round(time.Millisecond))

	client := &http.Client{Timeout: 30 * time.Second}
	for i := range liveRequests {
		resp, err := client.Get(appURL + "/front")
		if err != nil {
			t.Fatalf("request %d to the Java program: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d to the Java program: status %d", i, resp.StatusCode)
		}
	}

	deadline := time.Now().Add(time.Minute)
	for !tt.done(s.Counts()) && time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatal("the JVM exited early")
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Give a late, duplicate or extra export the chance to be counted.
	time.Sleep(1500 * time.Millisecond)
	c := s.Counts()
	t.Logf("sink counts %+v; calls: %s", c, strings.Join(calls.summary(), ", "))
	if !tt.done(c) {
		t.Errorf("the sink's counts %+v fall short of what the agent should have exported", c)
	}
	if c.Rejected != 0 {
		t.Errorf("the sink rejected %d of the agent's requests", c.Rejected)
	}
	if calls.has(func(c call) bool { return c.status >= 400 }) {
		t.Error("some of the agent's calls were answered with an error status")
	}
	tt.check(t, c, calls)
}

// inNetNS runs TestJavaAgentsLive again in a new network namespace that
// holds only loopback, reports its outcome and returns true; it returns
// false, to run on the host, when no namespace can be created.
func inNetNS(t *testing.T) bool {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Keep the subtests the parent's -run pattern selects, if it does.
	run := "^" + t.Name() + "$"
	if f := flag.Lookup("test.run"); f != nil {
		if _, sub, ok := strings.Cut(f.Value.String(), "/"); ok {
			run += "/" + sub
		}
	}
	args := []string{"-test.run", run, "-test.v"}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), liveNetNSEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The parent-death signal fires when the forking thread exits: keep
	// this goroutine on it until the child is done.
	runtime.LockOSThread()
	err = cmd.Run()
	runtime.UnlockOSThread()
	if errors.Is(err, syscall.EPERM) {
		t.Logf("cannot create a network namespace (%v): running on the host, with the agents' probes off", err)
		return false
	}
	t.Logf("in a network namespace with only loopback:\n%s", out.String())
	if err != nil {
		t.Fatalf("%s failed in its network namespace: %v", t.Name(), err)
	}
	if strings.Contains(out.String(), "--- SKIP: "+t.Name()+" (") {
		t.Skip("skipped in its network namespace")
	}
	return true
}
