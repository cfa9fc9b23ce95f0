package sink

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// gzipBomb returns a gzip body of about wire bytes that decompresses to
// decoded bytes of zeros: members of 1 MiB of zeros, one after another
// (gzip readers read every member of a stream, as HTTP clients' and
// servers' do).
func gzipBomb(t testing.TB, decoded int64) []byte {
	t.Helper()
	var member bytes.Buffer
	zw, err := gzip.NewWriterLevel(&member, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(member.Bytes(), int(decoded>>20))
}

// stalledUpload opens a connection to the sink and sends the headers of a
// POST announcing contentLength body bytes, then sends only body. It
// returns the connection, for the caller to read the answer from.
func stalledUpload(t *testing.T, url string, contentLength int64, body string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: sink\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n%s", contentLength, body)
	return conn
}

// answer reads the status of the response on conn, within d; 0 when the
// sink closed the connection without answering.
func answer(t *testing.T, conn net.Conn, d time.Duration) int {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("no answer within %v", d)
		}
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBombsAndStalledUploads is the attack of issue #19 on a sink with
// the default limits: 8 gzip bombs (1 MiB on the wire, 1 GiB decoded) in
// parallel and 20 uploads that announce a terabyte and send nothing. Every
// one is refused (413), what the sink allocated meanwhile is a small
// multiple of the bombs' wire bytes, not of their decoded size, and the
// sink still counts telemetry afterwards.
func TestBombsAndStalledUploads(t *testing.T) {
	s := New()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	bomb := gzipBomb(t, 1<<30)
	if len(bomb) > 2<<20 {
		t.Fatalf("bomb is %d bytes on the wire, want about 1 MiB", len(bomb))
	}

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)

	var conns []net.Conn
	for range 20 {
		conns = append(conns, stalledUpload(t, s.URL(), 1e12, ""))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp := send(t, http.MethodPost, s.URL()+"/v1/traces", ctPB, "gzip", bomb)
			if resp.status != http.StatusRequestEntityTooLarge {
				t.Errorf("gzip bomb: status %d, want 413 (body %q)", resp.status, resp.body)
			}
		})
	}
	for i, conn := range conns {
		if got := answer(t, conn, 5*time.Second); got != http.StatusRequestEntityTooLarge {
			t.Errorf("stalled upload %d: status %d, want 413 at once", i, got)
		}
	}
	wg.Wait()
	runtime.ReadMemStats(&after)

	// The test's own client holds each bomb once or twice, and the sink
	// reads each into a buffer that doubles up to its size: a few MiB a
	// bomb. Decompressing one into memory would be 8 MiB, and was 64.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the attack allocated %.1f MiB", float64(alloc)/(1<<20))
	if alloc > 64<<20 {
		t.Errorf("the attack allocated %d MiB, want under 64", alloc>>20)
	}
	want := Counts{Requests: 28, Rejected: 28, RejectedBytes: 8 * uint64(len(bomb))}
	if got := s.Counts(); got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
	if resp := send(t, http.MethodPost, s.URL()+"/api/v2/spans", ctJSON, "", []byte(`[{}]`)); resp.status != http.StatusAccepted {
		t.Errorf("after the attack: status %d, want 202", resp.status)
	}
}

// TestStalledUploadDropped sends part of a body and then nothing: the sink
// drops the upload after the stall timeout, counts it rejected with the
// bytes it got, and holds none of its memory.
func TestStalledUploadDropped(t *testing.T) {
	s := New()
	s.lim.stall = 200 * time.Millisecond
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	// A length under the limit, claimed and not sent, grows no buffer:
	// while the upload stalls, the sink holds its first read buffer only.
	conn := stalledUpload(t, s.URL(), MaxBodyBytes-1, "0123456789")
	time.Sleep(50 * time.Millisecond)
	if !s.mem.TryAcquire(s.lim.memory - firstRead) {
		t.Error("a stalled upload holds more than its first read buffer")
	} else {
		s.mem.Release(s.lim.memory - firstRead)
	}
	start := time.Now()
	got := answer(t, conn, 10*time.Second)
	if got != 0 && got != http.StatusRequestTimeout {
		t.Errorf("stalled upload: status %d, want 408 or the connection closed", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stalled upload dropped after %v, want about the 200ms stall timeout", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Counts().Rejected == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c := s.Counts(); c.Requests != 1 || c.Rejected != 1 || c.RejectedBytes != 10 || c.Bytes != 0 {
		t.Errorf("Counts() = %+v, want 1 request rejected with 10 bytes", c)
	}
	if !s.mem.TryAcquire(s.lim.memory) {
		t.Error("the dropped upload still holds memory of the budget")
	}
}

// TestLimits checks what is refused, and how, at the sink's limits.
func TestLimits(t *testing.T) {
	const limit = 64 << 10
	tracesPB := must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(10)).MarshalProto())
	tests := []struct {
		name        string
		body        io.Reader // sent chunked: no Content-Length
		encoding    string
		hold        bool // hold the only decode slot
		wantStatus  int
		wantRetry   bool
		minRejected uint64 // RejectedBytes at least
	}{
		{name: "chunked body over the limit", body: bytes.NewReader(make([]byte, 3*limit)),
			wantStatus: http.StatusRequestEntityTooLarge, minRejected: limit},
		{name: "chunked gzip bomb", body: bytes.NewReader(gzipBomb(t, 16<<20)), encoding: "gzip",
			wantStatus: http.StatusRequestEntityTooLarge, minRejected: 1},
		{name: "busy", body: bytes.NewReader(tracesPB), hold: true,
			wantStatus: http.StatusServiceUnavailable, wantRetry: true, minRejected: uint64(len(tracesPB))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			s.lim.maxBody, s.lim.maxDecoded = limit, limit
			s.lim.decodes, s.lim.wait = 1, 50*time.Millisecond
			if err := s.Start("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close(context.Background()) })
			if tt.hold {
				l := s.newLease(context.Background())
				if rerr := l.decodeSlot(); rerr != nil {
					t.Fatal(rerr.msg)
				}
				defer l.release()
			}
			req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/traces", io.NopCloser(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", ctPB)
			if tt.encoding != "" {
				req.Header.Set("Content-Encoding", tt.encoding)
			}
			resp, err := testClient().Do(req)
			if err != nil {
				t.Fatalf("POST: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d (body %q)", resp.StatusCode, tt.wantStatus, b)
			}
			if got := resp.Header.Get("Retry-After"); tt.wantRetry != (got != "") {
				t.Errorf("Retry-After %q, want one: %v", got, tt.wantRetry)
			}
			checkBody(t, "/v1/traces", response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: b})
			c := s.Counts()
			if c.Rejected != 1 || c.Bytes != 0 || c.Spans != 0 || c.RejectedBytes < tt.minRejected || c.RejectedBytes > limit+1 {
				t.Errorf("Counts() = %+v, want 1 rejected with %d to %d bytes", c, tt.minRejected, limit+1)
			}
		})
	}
}

// TestMemoryBudget takes the whole budget: a request that needs memory
// then waits the decode wait and is answered 503, and is served once the
// memory is given back.
func TestMemoryBudget(t *testing.T) {
	s := New()
	s.lim.wait = 50 * time.Millisecond
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	hog := s.newLease(context.Background())
	if rerr := hog.grow(s.lim.memory); rerr != nil {
		t.Fatal(rerr.msg)
	}
	body := []byte(`[{}]`)
	if resp := send(t, http.MethodPost, s.URL()+"/api/v2/spans", ctJSON, "", body); resp.status != http.StatusServiceUnavailable || resp.header.Get("Retry-After") == "" {
		t.Errorf("with the budget taken: status %d, Retry-After %q, want 503 and one", resp.status, resp.header.Get("Retry-After"))
	}
	hog.release()
	if resp := send(t, http.MethodPost, s.URL()+"/api/v2/spans", ctJSON, "", body); resp.status != http.StatusAccepted {
		t.Errorf("with the budget free: status %d, want 202", resp.status)
	}
	// The refused body was not read: it had no memory to be read into.
	want := Counts{Requests: 2, Rejected: 1, Bytes: uint64(len(body)), Spans: 1}
	if got := s.Counts(); got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
}

// TestLimitsCheck refuses limits under which the largest acceptable
// request could never be served.
func TestLimitsCheck(t *testing.T) {
	if err := defaultLimits().check(); err != nil {
		t.Errorf("default limits: %v", err)
	}
	// An Elastic agent streams one intake request for api_request_time,
	// 10 s by default, sending nothing while its application is idle.
	if elasticRequestTime := 10 * time.Second; defaultLimits().stall <= elasticRequestTime {
		t.Errorf("stall timeout %v would drop an idle Elastic agent's intake stream (%v)", defaultLimits().stall, elasticRequestTime)
	}
	s := New()
	s.lim.memory = MaxBodyBytes
	if err := s.Start("127.0.0.1:0"); err == nil {
		_ = s.Close(context.Background())
		t.Error("Start with a budget below the largest request succeeded, want an error")
	}
}

// TestConnectionLimit holds the sink's every connection with clients that
// send nothing: another client waits until one of them goes.
func TestConnectionLimit(t *testing.T) {
	s := New()
	s.lim.conns = 2
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	var idle []net.Conn
	for range s.lim.conns {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	post := func(timeout time.Duration) error {
		client := &http.Client{Timeout: timeout}
		resp, err := client.Post(s.URL()+"/api/v2/spans", ctJSON, strings.NewReader(`[{}]`))
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := post(300 * time.Millisecond); err == nil {
		t.Error("a request was served while idle clients held every connection")
	}
	idle[0].Close()
	if err := post(5 * time.Second); err != nil {
		t.Errorf("once an idle client went: %v", err)
	}
	// The request that gave up waited in the backlog and may have been
	// served too, once its turn came.
	if c := s.Counts(); c.Spans < 1 || c.Rejected != 0 {
		t.Errorf("Counts() = %+v, want the span of the request served", c)
	}
}

// TestTrickledUploadDropped checks that a body that never stalls for the
// stall timeout but arrives a byte at a time (300 such uploads held the
// connection cap for the server's whole ReadTimeout) is dropped once it
// falls behind the least body rate.
func TestTrickledUploadDropped(t *testing.T) {
	s := New()
	s.lim.stall = 300 * time.Millisecond
	s.lim.minRate = 1 << 10
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	conn := stalledUpload(t, s.URL(), 1<<20, "0")
	start := time.Now()
	done := make(chan int, 1)
	go func() {
		// A byte every 100 ms: never a stall, 10 bytes/s.
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if _, err := conn.Write([]byte("x")); err != nil || time.Since(start) > 20*time.Second {
				return
			}
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	got := answer(t, conn, 30*time.Second)
	close(done)
	if got != 0 && got != http.StatusRequestTimeout {
		t.Errorf("trickled upload: status %d, want 408 or the connection closed", got)
	}
	// Its deadline is 0.3 s + a few bytes at 1 KiB/s; without the rate,
	// only the server's ReadTimeout (a minute) would end it.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("trickled upload dropped after %v, want about the 0.3 s stall timeout", d)
	}
}

// TestBodyDeadline checks the deadline of a body's next read: the stall
// timeout from now, and no later than the stall timeout plus what the
// bytes so far allow at the least rate, from the body's start; under
// pressure, the pressed grace and rate; never less than minReadWindow
// from now.
func TestBodyDeadline(t *testing.T) {
	l := defaultLimits()
	start := time.Unix(1000, 0)
	tests := []struct {
		name    string
		at      time.Duration // since start
		n       int64
		pressed bool
		want    time.Duration // since start
	}{
		{"first read", 0, 0, false, StallTimeout},
		{"fast body", time.Second, 4 << 20, false, time.Second + StallTimeout},
		{"trickle", 14 * time.Second, 16, false, StallTimeout + 16*time.Second/MinBodyRate},
		{"an Elastic stream of 8 KiB over 10 s", 10 * time.Second, 8 << 10, false, StallTimeout + 125*time.Millisecond},
		{"pressed: first read", 0, 0, true, PressedBodyGrace},
		{"pressed: a batch of 512 KiB as fast as loopback", 10 * time.Millisecond, 512 << 10, true, 10*time.Millisecond + PressedBodyGrace},
		{"pressed: trickle", 900 * time.Millisecond, 1, true, PressedBodyGrace + time.Second/PressedBodyRate},
		{"pressed: a trickle's read that comes late still gets its window", 5 * time.Second, 1, true, 5*time.Second + minReadWindow},
	}
	for _, tt := range tests {
		if got := l.bodyDeadline(start, start.Add(tt.at), tt.n, tt.pressed).Sub(start); got != tt.want {
			t.Errorf("%s: deadline %v after the start, want %v", tt.name, got, tt.want)
		}
	}
}
