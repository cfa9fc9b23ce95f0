package sink

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	ossignal "os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// The test binary doubles as a sink in a process of its own, as toll
// _sink runs one, so that its memory is measured apart from the attack's.
const (
	helperEnv     = "TOLL_SINK_TEST_HELPER"
	helperAddrEnv = "TOLL_SINK_TEST_ADDR"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "sink":
		os.Exit(helperSink())
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperSink serves a sink on the address in helperAddrEnv with the
// memory limit of toll _sink, prints "listening" once it does, and stops
// on SIGTERM.
func helperSink() int {
	debug.SetMemoryLimit(ProcessMemoryLimit)
	s := New()
	if err := s.Start(os.Getenv(helperAddrEnv)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening")
	ctx, stop := ossignal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Close(cctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return 0
}

// startSinkProcess starts the test binary as a sink on a free loopback
// port and returns its address and pid; the process is stopped when the
// test ends.
func startSinkProcess(t *testing.T) (addr string, pid int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	ln.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperEnv+"=sink", helperAddrEnv+"="+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "listening" {
		t.Fatalf("sink process: %q, %v", line, err)
	}
	return addr, cmd.Process.Pid
}

// peakRSS returns the peak resident set (VmHWM) of process pid in bytes.
func peakRSS(t *testing.T, pid int) uint64 {
	t.Helper()
	p, err := procfs.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.NewStatus()
	if err != nil {
		t.Fatal(err)
	}
	return st.VmHWM
}

// exporter sends batches of 64 spans with the OpenTelemetry Go SDK's
// OTLP/HTTP exporter at a steady pace, as an agent's batch processor
// does, on the connection it keeps alive between them, with no retry.
type exporter struct {
	exp   *otlptrace.Exporter
	tr    *http.Transport
	spans []sdktrace.ReadOnlySpan
}

// newExporter returns an exporter to the sink at addr whose exports each
// give up after timeout.
func newExporter(t *testing.T, addr string, timeout time.Duration) *exporter {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	exp, err := otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL("http://"+addr+"/v1/traces"),
		otlptracehttp.WithHTTPClient(&http.Client{Transport: tr, Timeout: timeout}),
		otlptracehttp.WithTimeout(timeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatalf("new exporter: %v", err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	stubs := make(tracetest.SpanStubs, 64)
	now := time.Now()
	for i := range stubs {
		stubs[i] = tracetest.SpanStub{Name: fmt.Sprintf("span-%d", i), StartTime: now, EndTime: now.Add(time.Millisecond)}
	}
	return &exporter{exp: exp, tr: tr, spans: stubs.Snapshots()}
}

// exports is what an exporter achieved over a time.
type exports struct {
	answered int
	rate     float64 // answered a second
	last     error
}

// run exports a batch every every for d, an export that is still going
// when the next is due delaying it (the ticks between are lost), and
// returns the exports answered. With redialAt above zero, it closes its
// connection once, that long after it began, so that the next export
// dials a new one.
func (e *exporter) run(d, every, redialAt time.Duration) exports {
	var res exports
	tick := time.NewTicker(every)
	defer tick.Stop()
	start := time.Now()
	redialled := redialAt <= 0
	for time.Since(start) < d {
		if !redialled && time.Since(start) >= redialAt {
			e.tr.CloseIdleConnections()
			redialled = true
		}
		if err := e.exp.ExportSpans(context.Background(), e.spans); err != nil {
			res.last = err
		} else {
			res.answered++
		}
		<-tick.C
	}
	res.rate = float64(res.answered) / time.Since(start).Seconds()
	return res
}

// trickle is an attack of bodies trickled into the sink: conns connections
// each sending the headers of a POST that announces size bytes, then a
// byte every every, dialling again 100 ms after the sink drops it, at most
// maxDials times, until ctx is done.
type trickle struct {
	conns, maxDials int
	size            int
	every           time.Duration

	dials, drops atomic.Int64
}

// run attacks the sink at addr until ctx is done, and returns once every
// attacker has stopped.
func (a *trickle) run(ctx context.Context, addr string) {
	var wg sync.WaitGroup
	for range a.conns {
		wg.Go(func() {
			for i := 0; i < a.maxDials && ctx.Err() == nil; i++ {
				d := net.Dialer{Timeout: time.Second}
				conn, err := d.DialContext(ctx, "tcp", addr)
				if err == nil {
					a.dials.Add(1)
					stop := context.AfterFunc(ctx, func() { conn.Close() })
					a.hold(ctx, conn)
					stop()
					conn.Close()
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
	wg.Wait()
}

// hold sends the request's headers on conn, then a byte of its body every
// a.every until the sink drops the connection or ctx is done.
func (a *trickle) hold(ctx context.Context, conn net.Conn) {
	if _, err := fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: sink\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n", a.size); err != nil {
		return
	}
	// The sink answers (408) or closes: either ends the read.
	dropped := make(chan struct{})
	go func() {
		defer close(dropped)
		var b [512]byte
		_, _ = conn.Read(b[:])
	}()
	for sent := 0; sent < a.size; sent++ {
		if _, err := conn.Write([]byte{'x'}); err != nil {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-dropped:
			a.drops.Add(1)
			return
		case <-time.After(a.every):
		}
	}
	select {
	case <-ctx.Done():
	case <-dropped:
		a.drops.Add(1)
	}
}

// TestKeptAliveExporterUnderTrickle runs a sink in a process of its own
// and has two agents' exporters (the OpenTelemetry SDK's OTLP/HTTP
// exporter, a batch every 50 ms, each on the connection it keeps alive)
// send it batches, alone and then while 300 connections trickle bodies
// into it, a byte every 10 s of a POST announcing 1 MB, each dialling
// again when dropped: more than the sink serves at once (MaxConns). One
// exporter's connection was made before the attack; the other's is closed
// as the attack begins and again halfway through it, so that it dials
// behind the attackers, as an agent that starts, or whose connection was
// closed, does. Each must be answered at least 80% as often under the
// attack as alone, and the sink's peak RSS stay under 100 MB.
//
// The sink runs at normal priority, not at idle priority as toll _sink
// does, so that what is measured is the attack's effect, not how much
// CPU the rest of the machine leaves it.
func TestKeptAliveExporterUnderTrickle(t *testing.T) {
	if testing.Short() {
		t.Skip("attacks a sink process for about 25 s")
	}
	const (
		alone    = 4 * time.Second
		settle   = time.Second // the attackers hold every place the sink serves
		attacked = 18 * time.Second
		every    = 50 * time.Millisecond
		timeout  = 2 * time.Second // each export's
	)
	addr, pid := startSinkProcess(t)
	kept, redialled := newExporter(t, addr, timeout), newExporter(t, addr, timeout)
	both := func(d, redialAt time.Duration) (exports, exports) {
		var a, b exports
		var wg sync.WaitGroup
		wg.Go(func() { a = kept.run(d, every, 0) })
		wg.Go(func() { b = redialled.run(d, every, redialAt) })
		wg.Wait()
		return a, b
	}
	keptAlone, redialledAlone := both(alone, 0)
	if keptAlone.answered == 0 || redialledAlone.answered == 0 {
		t.Fatalf("exports without the attack: %d and %d answered: %v, %v", keptAlone.answered, redialledAlone.answered, keptAlone.last, redialledAlone.last)
	}

	redialled.tr.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	attack := &trickle{conns: 300, maxDials: 50, size: 1_000_000, every: 10 * time.Second}
	done := make(chan struct{})
	go func() { attack.run(ctx, addr); close(done) }()
	time.Sleep(settle)
	keptAttacked, redialledAttacked := both(attacked, attacked/2)
	cancel()
	<-done

	mb := float64(peakRSS(t, pid)) / 1e6
	t.Logf("exports answered a second: kept alive %.1f alone, %.1f under the trickle; dialling as it began and halfway %.1f alone, %.1f under it; attack: %d connections dialled, %d dropped by the sink; sink peak RSS %.1f MB",
		keptAlone.rate, keptAttacked.rate, redialledAlone.rate, redialledAttacked.rate, attack.dials.Load(), attack.drops.Load(), mb)
	for _, c := range []struct {
		name            string
		alone, attacked exports
	}{
		{"connected before the attack", keptAlone, keptAttacked},
		{"dialling during the attack", redialledAlone, redialledAttacked},
	} {
		if c.attacked.rate < 0.8*c.alone.rate {
			t.Errorf("the exporter %s was answered %.1f times a second under the trickle against %.1f alone (%.0f%%), want at least 80%%; last error: %v",
				c.name, c.attacked.rate, c.alone.rate, 100*c.attacked.rate/c.alone.rate, c.attacked.last)
		}
	}
	if mb >= 100 {
		t.Errorf("the sink's peak RSS was %.1f MB under the trickle, want under 100 MB", mb)
	}
}
