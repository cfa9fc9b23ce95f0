package sink

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// sdkTraces returns n spans as an SDK batches them: one resource and
// scope, every span of one trace (the most a batch repeats), each with its
// own random span ID, nanosecond timestamps a few microseconds apart and
// the same HTTP attributes.
func sdkTraces(n int) ptrace.Traces {
	rng := rand.New(rand.NewPCG(1, 2))
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "java")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("io.opentelemetry.tomcat-10.0")
	var trace pcommon.TraceID
	for i := range trace {
		trace[i] = byte(rng.Uint32())
	}
	t0 := uint64(1_764_000_000_000_000_000)
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetName("GET /api/orders/{id}")
		sp.SetKind(ptrace.SpanKindServer)
		sp.SetTraceID(trace)
		var id pcommon.SpanID
		for j := range id {
			id[j] = byte(rng.Uint32())
		}
		sp.SetSpanID(id)
		start := t0 + uint64(i)*uint64(3000+rng.IntN(2000))
		sp.SetStartTimestamp(pcommon.Timestamp(start))
		sp.SetEndTimestamp(pcommon.Timestamp(start + uint64(200_000+rng.IntN(100_000))))
		a := sp.Attributes()
		a.PutStr("http.request.method", "GET")
		a.PutStr("http.route", "/api/orders/{id}")
		a.PutInt("http.response.status_code", 200)
		a.PutStr("url.scheme", "http")
		a.PutStr("server.address", "localhost")
	}
	return td
}

// repeatedLogs returns n log records of one body and severity, a
// microsecond apart, with no trace context: a service logging the same
// line in a loop, about the most a real payload repeats.
func repeatedLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := range n {
		r := lr.AppendEmpty()
		r.SetTimestamp(pcommon.Timestamp(1_764_000_000_000_000_000 + uint64(i)*1000))
		r.SetSeverityText("INFO")
		r.Body().SetStr("request served")
	}
	return ld
}

// TestDecompressionRatio checks the ratio at which a compressed body is
// refused: real payloads, even those that repeat the most, decompress far
// below MaxRatio and are counted; a bomb is refused for its ratio, not at
// the decoded limit, so that the sink inflates about RatioFrom of it; and
// a small body of any ratio is accepted.
func TestDecompressionRatio(t *testing.T) {
	s := New()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })

	traces := ptraceotlp.NewExportRequestFromTraces(sdkTraces(6000))
	tracesPB, err := traces.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	tracesJSON, err := traces.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	logsJSON, err := plogotlp.NewExportRequestFromLogs(repeatedLogs(20000)).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path, ct string
		body           []byte
	}{
		{"SDK batch, protobuf", "/v1/traces", ctPB, tracesPB},
		{"SDK batch, JSON", "/v1/traces", ctJSON, tracesJSON},
		{"one log line repeated, JSON", "/v1/logs", ctJSON, logsJSON},
	} {
		t.Run(tt.name, func(t *testing.T) {
			z := gz(t, tt.body)
			ratio := float64(len(tt.body)) / float64(len(z))
			t.Logf("%d bytes, %d gzipped: %.1f:1", len(tt.body), len(z), ratio)
			if len(tt.body) < RatioFrom {
				t.Fatalf("the payload is %d bytes, under RatioFrom (%d): it does not test the ratio", len(tt.body), RatioFrom)
			}
			// A margin of four: payloads that repeat more than these
			// are not telemetry.
			if ratio > MaxRatio/4 {
				t.Errorf("a real payload compresses %.0f:1, within four times MaxRatio (%d:1)", ratio, MaxRatio)
			}
			if resp := send(t, http.MethodPost, s.URL()+tt.path, tt.ct, "gzip", z); resp.status != http.StatusOK {
				t.Errorf("status %d, want 200 (%s)", resp.status, resp.body)
			}
		})
	}

	t.Run("bomb", func(t *testing.T) {
		resp := send(t, http.MethodPost, s.URL()+"/v1/traces", ctPB, "gzip", gzipBomb(t, 64<<20))
		if resp.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(resp.body), fmt.Sprintf("more than %d times its size", MaxRatio)) {
			t.Errorf("a gzip bomb: status %d (%s), want 413 for its ratio", resp.status, resp.body)
		}
	})

	t.Run("small body of zeros", func(t *testing.T) {
		zeros := make([]byte, RatioFrom/2)
		l := s.newLease(context.Background())
		defer l.release()
		out, rerr := s.decompress(gzipped, gz(t, zeros), l)
		if rerr != nil || len(out) != len(zeros) {
			t.Errorf("half of RatioFrom of zeros: %d bytes, %v; want them all", len(out), rerr)
		}
	})
}
