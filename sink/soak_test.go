package sink

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// soakEnv sets the soak test's duration (a Go duration, such as 60s); it
// runs for defaultSoak without it, so that go test stays quick.
const (
	soakEnv     = "TOLL_SOAK"
	defaultSoak = 5 * time.Second
)

// soakDuration returns how long the soak test runs.
func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv(soakEnv)
	if v == "" {
		return defaultSoak
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		t.Fatalf("%s=%q: want a duration of at least 1s, such as 60s", soakEnv, v)
	}
	return d
}

// memSample is one reading of the test process's memory.
type memSample struct {
	at        time.Duration // since the soak began
	rss, heap uint64        // resident set; heap in use (spans allocated)
}

// TestSoak feeds one sink 50,000 spans a second, in OTLP/HTTP requests of
// 500 spans on loopback, for TOLL_SOAK (5 s by default), and checks that
// no span is lost (every one sent is counted, none rejected) and that
// memory is flat: over the second half, neither the resident set nor the
// heap in use grows by more than a small bound from its third quarter to
// its fourth.
func TestSoak(t *testing.T) {
	const (
		spansPerReq = 500
		reqPerSec   = 100 // 50,000 spans/s
		workers     = 4
		growthBound = 16 << 20
	)
	dur := soakDuration(t)
	s := New()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	body := must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(spansPerReq)).MarshalProto())
	proc, err := procfs.Self()
	if err != nil {
		t.Fatal(err)
	}
	// Start from a collected heap, whatever the tests before left.
	runtime.GC()
	debug.FreeOSMemory()

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var (
		sent, failed atomic.Uint64 // requests
		due          = make(chan struct{}, reqPerSec)
		wg           sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for range due {
				resp, err := client.Post(s.URL()+"/v1/traces", ctPB, bytes.NewReader(body))
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
					continue
				}
				sent.Add(1)
			}
		})
	}

	// The schedule: one request every 10 ms, on a fixed timeline (a
	// request that falls due while all workers are busy waits for one).
	var samples []memSample
	start := time.Now()
	tick := time.NewTicker(time.Second / reqPerSec)
	defer tick.Stop()
	lastSample := time.Duration(-1)
	scheduled := 0
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			select {
			case due <- struct{}{}:
				scheduled++
			case <-ctx.Done():
				break loop
			}
		}
		if at := time.Since(start); at-lastSample >= 250*time.Millisecond {
			lastSample = at
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			st, err := proc.Stat()
			if err != nil {
				t.Fatal(err)
			}
			samples = append(samples, memSample{at: at, rss: uint64(st.ResidentMemory()), heap: ms.HeapInuse})
		}
	}
	close(due)
	wg.Wait()
	elapsed := time.Since(start)

	c := s.Counts()
	n := sent.Load()
	t.Logf("%v: %d of %d scheduled requests sent (%.0f spans/s), %d failed; sink: %+v",
		elapsed.Round(time.Millisecond), n, scheduled, float64(n*spansPerReq)/elapsed.Seconds(), failed.Load(), c)
	if failed.Load() > 0 || c.Rejected > 0 {
		t.Errorf("%d requests failed, %d rejected by the sink, want none", failed.Load(), c.Rejected)
	}
	if c.Spans != n*spansPerReq || c.Requests != n {
		t.Errorf("sink counted %d spans in %d requests, want the %d sent in %d", c.Spans, c.Requests, n*spansPerReq, n)
	}
	if n < uint64(scheduled)/2 {
		t.Errorf("only %d of %d scheduled requests were sent: the sink did not keep up", n, scheduled)
	}

	var q3, q4 memSample // the largest of each quarter of the run
	for _, m := range samples {
		switch {
		case m.at >= 3*dur/4:
			q4.rss, q4.heap = max(q4.rss, m.rss), max(q4.heap, m.heap)
		case m.at >= dur/2:
			q3.rss, q3.heap = max(q3.rss, m.rss), max(q3.heap, m.heap)
		}
	}
	t.Logf("largest RSS %.1f then %.1f MiB, heap in use %.1f then %.1f MiB, in the third and fourth quarters",
		mib(q3.rss), mib(q4.rss), mib(q3.heap), mib(q4.heap))
	if q3.rss == 0 || q4.rss == 0 {
		t.Fatalf("no memory samples in the second half (%d samples)", len(samples))
	}
	if q4.rss > q3.rss+growthBound || q4.heap > q3.heap+growthBound {
		t.Errorf("memory grew over the second half: RSS %.1f → %.1f MiB, heap %.1f → %.1f MiB (bound +%d MiB)",
			mib(q3.rss), mib(q4.rss), mib(q3.heap), mib(q4.heap), growthBound>>20)
	}
	if !s.mem.TryAcquire(s.lim.memory) {
		t.Error("the sink's budget was not all given back")
	}
}

// mib returns b in MiB.
func mib(b uint64) float64 { return float64(b) / (1 << 20) }
