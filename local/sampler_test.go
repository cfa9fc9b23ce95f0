package local

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/sink"
)

// TestSamplerRecordsRejects checks that a sample of the sink records its
// rejects apart, and keeps bytes as every request's bytes, rejected ones
// included, as trial files always had them.
func TestSamplerRecordsRejects(t *testing.T) {
	sk := sink.New()
	if err := sk.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sk.Close(context.Background()) })
	post := func(path, ct, body string, want int) {
		t.Helper()
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Post(sk.URL()+path, ct, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("POST %s: status %d, want %d", path, resp.StatusCode, want)
		}
	}
	post("/api/v2/spans", "application/json", `[{},{}]`, http.StatusAccepted)    // 7 bytes
	post("/api/v2/spans", "application/json", `not json`, http.StatusBadRequest) // 8 bytes

	t0 := time.Now()
	s := &sampler{t0: t0, sink: sk}
	s.take(t0.Add(time.Second))
	if len(s.telemetry) != 1 {
		t.Fatalf("%d telemetry samples, want 1", len(s.telemetry))
	}
	got := s.telemetry[0]
	if got.Requests != 2 || got.Bytes != 15 || got.Spans != 2 || got.Rejected != 1 || got.RejectedBytes != 8 || got.T != 1 {
		t.Errorf("telemetry sample %+v, want 2 requests, 15 bytes, 2 spans, 1 rejected with 8 bytes, at t=1", got)
	}
}
