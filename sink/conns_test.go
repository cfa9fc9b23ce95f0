package sink

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// TestVictim checks the order in which connections are closed to make
// room: quiet ones first, by what they do (not sent a request, idle,
// active), oldest first; when none is quiet, the one that changed longest
// ago; never the newcomer.
func TestVictim(t *testing.T) {
	const quiet = time.Second
	now := time.Unix(1000, 0)
	type conn struct {
		name  string
		state trackedState
		age   time.Duration // since its state changed
	}
	tests := []struct {
		name  string
		conns []conn // in the order they changed state; the newcomer last
		want  string // "" for none
	}{
		{"quiet new before older quiet idle and active", []conn{
			{"active", trackedActive, 9 * time.Second}, {"idle", trackedIdle, 8 * time.Second},
			{"new", trackedNew, 2 * time.Second}, {"newcomer", trackedNew, 0}}, "new"},
		{"quiet idle before older quiet active", []conn{
			{"active", trackedActive, 9 * time.Second}, {"idle", trackedIdle, 2 * time.Second},
			{"fresh new", trackedNew, 10 * time.Millisecond}, {"newcomer", trackedNew, 0}}, "idle"},
		{"quiet active before fresh new", []conn{
			{"active", trackedActive, 2 * time.Second}, {"idle", trackedIdle, 500 * time.Millisecond},
			{"fresh new", trackedNew, 10 * time.Millisecond}, {"newcomer", trackedNew, 0}}, "active"},
		{"oldest of each state first", []conn{
			{"new 1", trackedNew, 3 * time.Second}, {"new 2", trackedNew, 2 * time.Second},
			{"newcomer", trackedNew, 0}}, "new 1"},
		{"none quiet: the one that changed longest ago", []conn{
			{"active", trackedActive, 300 * time.Millisecond}, {"idle", trackedIdle, 200 * time.Millisecond},
			{"new", trackedNew, 100 * time.Millisecond}, {"newcomer", trackedNew, 0}}, "active"},
		{"none quiet, the newcomer the only new", []conn{
			{"idle", trackedIdle, 200 * time.Millisecond}, {"active", trackedActive, 100 * time.Millisecond},
			{"newcomer", trackedNew, 0}}, "idle"},
		{"never the newcomer", []conn{{"newcomer", trackedNew, 0}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr connTracker
			var newcomer *trackedConn
			names := map[*trackedConn]string{}
			for _, c := range tt.conns {
				newcomer = &trackedConn{state: c.state, since: now.Add(-c.age)}
				tr.byState[c.state].pushBack(newcomer)
				names[newcomer] = c.name
			}
			got := ""
			if v := tr.victim(now, quiet, newcomer); v != nil {
				got = names[v]
			}
			if got != tt.want {
				t.Errorf("victim = %q, want %q", got, tt.want)
			}
		})
	}
}

// holdConns keeps n connections to addr open that send nothing, dialling
// again 100 ms after the sink closes one (as e2e/faults' attackers do),
// until ctx is done. It returns how many the sink closed.
func holdConns(ctx context.Context, t *testing.T, wg *sync.WaitGroup, addr string, n int) *atomic.Int64 {
	t.Helper()
	closed := new(atomic.Int64)
	for range n {
		wg.Go(func() {
			for i := 0; i < 1000 && ctx.Err() == nil; i++ {
				var d net.Dialer
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					return
				}
				stop := context.AfterFunc(ctx, func() { c.Close() })
				_, err = io.Copy(io.Discard, c) // until the sink closes it
				if stop() && err == nil {
					closed.Add(1)
				}
				c.Close()
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
	return closed
}

// waitOpen waits up to d for the sink to track want connections, and
// returns how many it tracks.
func waitOpen(s *Sink, want int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := s.conns.open()
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEvictionServesNewConnections fills the sink's connections with
// clients that send nothing and dial again whenever the sink closes theirs,
// then exports with a client that dials a connection for every export:
// every export is answered, the sink closing the silent connections to
// make room, and it never keeps more than its limit open (and the
// newcomer, for a moment). Once every client has gone, it tracks none.
// With a listener that blocked past the limit, the exporter waited behind
// the silent connections until its timeout.
func TestEvictionServesNewConnections(t *testing.T) {
	s := New()
	s.lim.conns = 16
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	addr := strings.TrimPrefix(s.URL(), "http://")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	closed := holdConns(ctx, t, &wg, addr, 2*s.lim.conns)
	if n := waitOpen(s, s.lim.conns, 5*time.Second); n != s.lim.conns {
		t.Fatalf("the sink keeps %d connections open with %d clients holding them, want %d", n, 2*s.lim.conns, s.lim.conns)
	}

	var peak atomic.Int64
	sampled := make(chan struct{})
	sampling, stopSampling := context.WithCancel(context.Background())
	go func() {
		defer close(sampled)
		for sampling.Err() == nil {
			if n := int64(s.conns.open()); n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()

	body := must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(4)).MarshalProto())
	// Within 3 s: the server drops a connection that sends no request in
	// 5 s (ReadHeaderTimeout), which would let an exporter that waited
	// for that through.
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	const exports = 20
	for i := range exports {
		resp, err := client.Post(s.URL()+"/v1/traces", ctPB, bytes.NewReader(body))
		if err != nil {
			t.Fatalf("export %d on a new connection while silent clients held the sink: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("export %d: status %d, want 200", i, resp.StatusCode)
		}
	}
	stopSampling()
	<-sampled
	if got := s.Counts().Spans; got != exports*4 {
		t.Errorf("Counts().Spans = %d, want %d", got, exports*4)
	}
	if p := peak.Load(); p > int64(s.lim.conns+1) {
		t.Errorf("the sink kept %d connections open, want at most %d", p, s.lim.conns+1)
	}
	if closed.Load() == 0 {
		t.Error("the sink closed none of the silent connections")
	}
	t.Logf("%d silent connections closed to make room, at most %d open", closed.Load(), peak.Load())

	cancel()
	wg.Wait()
	if n := waitOpen(s, 0, 5*time.Second); n != 0 {
		t.Errorf("the sink still tracks %d connections after every client closed its own", n)
	}
}

// TestConnTrackingHTTP2 checks that connections are tracked through their
// states and forgotten when they close, whatever the protocol: an HTTP/2
// connection (prior knowledge) reports idle between requests on the same
// connection as it reported new, and closed when it ends.
func TestConnTrackingHTTP2(t *testing.T) {
	tests := []struct {
		name      string
		transport func() *http.Transport
	}{
		{"HTTP/1.1 kept alive", func() *http.Transport { return &http.Transport{} }},
		{"HTTP/2 prior knowledge", func() *http.Transport {
			p := new(http.Protocols)
			p.SetUnencryptedHTTP2(true)
			return &http.Transport{Protocols: p}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startSink(t)
			tr := tt.transport()
			client := &http.Client{Timeout: 5 * time.Second, Transport: tr}
			body := must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(2)).MarshalProto())
			for range 3 {
				resp, err := client.Post(s.URL()+"/v1/traces", ctPB, bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d, want 200", resp.StatusCode)
				}
			}
			// The sink sees the end of the request a moment after the
			// client read the reply.
			deadline := time.Now().Add(5 * time.Second)
			for {
				idle, total := s.conns.count(trackedIdle), s.conns.open()
				if idle == 1 && total == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the sink tracks %d connections, %d idle, want the client's one, idle", total, idle)
				}
				time.Sleep(5 * time.Millisecond)
			}
			tr.CloseIdleConnections()
			if n := waitOpen(s, 0, 5*time.Second); n != 0 {
				t.Errorf("the sink still tracks %d connections after the client closed its own", n)
			}
		})
	}
}

// count returns the number of connections tracked in state st.
func (t *connTracker) count(st trackedState) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for tc := t.byState[st].head; tc != nil; tc = tc.next {
		n++
	}
	return n
}
