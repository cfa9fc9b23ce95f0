package jvm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serverJava is a tiny HTTP server. Before serving it allocates enough to
// cause young collections; GET /gc runs System.gc(). It exits by itself
// after the number of seconds given, so it cannot outlive the test.
const serverJava = `
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;

public class TollPerfServer {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        long life = Long.parseLong(args[0]);
        for (int i = 0; i < 200_000; i++) {
            sink = new byte[1024];
        }
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        s.createContext("/", x -> reply(x, "ok"));
        s.createContext("/gc", x -> { System.gc(); reply(x, "gc"); });
        s.start();
        System.out.println(s.getAddress().getPort());
        System.out.flush();
        Thread.sleep(life * 1000);
        System.exit(0);
    }

    static void reply(HttpExchange x, String body) throws IOException {
        byte[] b = body.getBytes();
        x.sendResponseHeaders(200, b.length);
        try (OutputStream o = x.getResponseBody()) {
            o.write(b);
        }
    }
}
`

// jvmLife bounds how long a test JVM lives, in seconds.
const jvmLife = 60

// TestLive starts JVMs with the G1, Serial and Parallel collectors and
// checks Counters against jstat reading the same JVM, and that GCName
// names each collector.
func TestLive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs; skipped with -short")
	}
	for _, tool := range []string{"java", "javac", "jstat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("live test needs a JDK: %v", err)
		}
	}
	classes := t.TempDir()
	src := filepath.Join(classes, "TollPerfServer.java")
	if err := os.WriteFile(src, []byte(serverJava), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "javac", "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}

	for _, c := range []struct {
		name  string
		flags []string
		gens  []string
	}{
		{"G1", []string{"-XX:+UseG1GC"}, []string{"young", "old"}},
		{"Serial", []string{"-XX:+UseSerialGC"}, []string{"new", "old"}},
		{"Parallel", []string{"-XX:+UseParallelGC"}, []string{"new", "old"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			launched := time.Now()
			j := startJVM(t, classes, c.flags...)

			// The JVM creates its file early in start-up, well before main
			// prints the port, and marks it accessible before main runs.
			path, err := Path(j.pid)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()

			for range 50 {
				j.get(t, "/")
			}
			j.get(t, "/gc") // also makes the JVM refresh its metaspace counters

			a, err := r.Counters()
			if err != nil {
				t.Fatal(err)
			}
			// jstat reads the same file; the three run at once, between
			// two reads of ours.
			opts := []string{"-gc", "-gccapacity", "-class"}
			outs := make([]string, len(opts))
			var wg sync.WaitGroup
			for i, opt := range opts {
				wg.Go(func() { outs[i] = jstat(t, j.pid, opt) })
			}
			wg.Wait()
			b, err := r.Counters()
			if err != nil {
				t.Fatal(err)
			}
			if t.Failed() {
				t.FailNow()
			}
			gc, gccap, class := parseJstat(t, outs[0]), parseJstat(t, outs[1]), parseJstat(t, outs[2])
			t.Logf("toll: %+v", a)
			checkAgainstJstat(t, a, b, gc, gccap, class, 0)

			var names []string
			for _, g := range a.Generations {
				names = append(names, g.Name)
			}
			if strings.Join(names, ",") != strings.Join(c.gens, ",") {
				t.Errorf("generations %v, want %v", names, c.gens)
			}
			if len(a.Collectors) < 2 || a.Collectors[0].Count < 1 || a.Collectors[1].Count < 1 {
				t.Errorf("collectors %+v: want young collections and a full one", a.Collectors)
			}
			var colls []string
			for _, col := range a.Collectors {
				colls = append(colls, col.Name)
			}
			if got := GCName(colls); got != c.name {
				t.Errorf("collectors %q read as %q, want %q", colls, got, c.name)
			}
			if a.MetaspaceUsed == 0 || a.MetaspaceCommitted < a.MetaspaceUsed || a.HeapUsed == 0 || a.HeapCommitted < a.HeapUsed || a.HeapCommitted > 64<<20 {
				t.Errorf("metaspace %d of %d, heap %d of %d bytes (-Xmx64m)", a.MetaspaceUsed, a.MetaspaceCommitted, a.HeapUsed, a.HeapCommitted)
			}
			if a.Threads < 2 || a.DaemonThreads >= a.Threads || a.PeakThreads < a.Threads {
				t.Errorf("threads %d, daemon %d, peak %d", a.Threads, a.DaemonThreads, a.PeakThreads)
			}
			if a.VMStart.Before(launched.Add(-time.Second)) || a.VMInitDone.Before(a.VMStart) || a.VMInitDone.After(time.Now()) {
				t.Errorf("launched at %v, VM started %v, initialized %v", launched, a.VMStart, a.VMInitDone)
			}
			if since := time.Since(launched); a.Uptime <= 0 || a.Uptime > since {
				t.Errorf("uptime %v, %v after launch", a.Uptime, since)
			}

			// The mapping follows the JVM without reopening.
			j.get(t, "/gc")
			c, err := r.Counters()
			if err != nil {
				t.Fatal(err)
			}
			if c.GCCount <= b.GCCount || c.GCTime < b.GCTime || c.Uptime <= a.Uptime {
				t.Errorf("after a GC: %d collections in %v, up %v; before %d in %v, up %v",
					c.GCCount, c.GCTime, c.Uptime, b.GCCount, b.GCTime, a.Uptime)
			}

			// What a read of the live file costs is logged, not asserted (a
			// test asserts no time): BenchmarkCounters measures it.
			const n = 2000
			start := time.Now()
			for range n {
				r.Counters()
			}
			t.Logf("Counters on the live file: %v a call", time.Since(start)/n)

			// When the JVM exits it removes its file; the Reader keeps the
			// last values.
			j.stop(t)
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("after the JVM exited, %s: %v", path, err)
			}
			if _, err := Path(j.pid); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("Path after the JVM exited: %v", err)
			}
			if d, err := r.Counters(); err != nil || d.GCCount < c.GCCount {
				t.Errorf("Counters after the JVM exited: %d collections, %v", d.GCCount, err)
			}
		})
	}
}

// jvm is a JVM started by a test.
type jvm struct {
	pid    int
	port   string
	done   chan struct{} // closed when it has exited
	stderr *lineBuffer
	once   sync.Once
	cmd    *exec.Cmd
}

// startJVM starts TollPerfServer from classes with flags and waits until
// it serves. Cleanup stops it.
func startJVM(t *testing.T, classes string, flags ...string) *jvm {
	t.Helper()
	args := append([]string{"-XX:+UsePerfData", "-Xmx64m"}, flags...)
	args = append(args, "-cp", classes, "TollPerfServer", strconv.Itoa(jvmLife))
	cmd := exec.Command("java", args...)
	// Killed should the test process die first (else it exits after jvmLife).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, stderr := newLineBuffer(), newLineBuffer()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("java: %v", err)
	}
	j := &jvm{pid: cmd.Process.Pid, done: make(chan struct{}), stderr: stderr, cmd: cmd}
	go func() { cmd.Wait(); close(j.done) }()
	t.Cleanup(func() { j.stop(t) })
	select {
	case <-stdout.line:
		j.port = strings.TrimSpace(stdout.String())
	case <-j.done:
		t.Fatalf("java %v exited: %s", args, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("java %v did not start serving in 30 s: %s", args, stderr)
	}
	return j
}

// stop ends the JVM with SIGTERM, so that it removes its hsperfdata file,
// or SIGKILL after 5 s, and removes a file it left.
func (j *jvm) stop(t *testing.T) {
	j.once.Do(func() {
		j.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-j.done:
		case <-time.After(5 * time.Second):
			t.Logf("JVM %d ignored SIGTERM; killing it", j.pid)
			j.cmd.Process.Kill()
			<-j.done
		}
		if ps, _ := filepath.Glob(filepath.Join("/tmp", "hsperfdata_*", strconv.Itoa(j.pid))); len(ps) > 0 {
			for _, p := range ps {
				os.Remove(p)
			}
		}
	})
}

func (j *jvm) get(t *testing.T, path string) {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://127.0.0.1:" + j.port + path)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
}

// jstat runs jstat option pid and returns its output. It may be called
// from any goroutine.
func jstat(t *testing.T, pid int, option string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "jstat", option, strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		t.Errorf("jstat %s %d: %v\n%s", option, pid, err, out)
		return ""
	}
	t.Logf("jstat %s:\n%s", option, out)
	return string(out)
}

// lineBuffer is an io.Writer that keeps what it is given and closes line
// at the first newline.
type lineBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line chan struct{}
	seen bool
}

func newLineBuffer() *lineBuffer { return &lineBuffer{line: make(chan struct{})} }

func (l *lineBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if !l.seen && bytes.IndexByte(p, '\n') >= 0 {
		l.seen = true
		close(l.line)
	}
	return len(p), nil
}

func (l *lineBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
