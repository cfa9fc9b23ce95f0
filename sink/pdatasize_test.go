package sink

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// rawCodec sends and receives gRPC messages as bytes, unencoded.
type rawCodec struct{}

// Marshal returns v, a []byte.
func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }

// Unmarshal stores data in v, a *[]byte.
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}

// Name is the content subtype gRPC announces: the bytes are protobuf.
func (rawCodec) Name() string { return "proto" }

// field appends a length-delimited field num holding v to b.
func field(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// emptySpans returns an OTLP trace request of n empty spans, two bytes
// each on the wire: the cheapest payload for the most pdata objects.
func emptySpans(n int) []byte {
	var spans []byte
	for range n {
		spans = field(spans, 2, nil) // ScopeSpans.spans
	}
	return field(nil, 1, field(nil, 2, spans)) // request.resource_spans.scope_spans
}

// emptyAttributes returns an OTLP trace request of one span with n empty
// attributes.
func emptyAttributes(n int) []byte {
	var span []byte
	for range n {
		span = field(span, 9, nil) // Span.attributes
	}
	return field(nil, 1, field(nil, 2, field(nil, 2, span)))
}

// nestedValue returns an OTLP trace request of one span with an attribute
// whose value is an array holding an array ..., nesting messages depth
// levels deep in all (5 to the attribute, then 2 per array).
func nestedValue(depth int) []byte {
	var v []byte
	for range (depth - 5) / 2 {
		v = field(nil, 5, field(nil, 1, v)) // AnyValue.array_value.values
	}
	kv := field(field(nil, 1, []byte("k")), 2, v)
	return field(nil, 1, field(nil, 2, field(nil, 2, field(nil, 9, kv))))
}

// attributeSpans returns n spans of ten string attributes each.
func attributeSpans(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetName(fmt.Sprintf("span-%d", i))
		for k := range 10 {
			sp.Attributes().PutStr(fmt.Sprintf("attribute.%d", k), "value")
		}
	}
	return td
}

// allocated returns the bytes f allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestPdataCostBoundsDecoding checks that what the sink charges for an
// OTLP payload is at least what pdata allocates decoding it, for the
// payloads that make pdata allocate the most per byte and for typical ones.
func TestPdataCostBoundsDecoding(t *testing.T) {
	type unmarshaler interface {
		UnmarshalProto([]byte) error
		UnmarshalJSON([]byte) error
	}
	tracesJSON := func(td ptrace.Traces) []byte {
		return must(t)(ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON())
	}
	emptyJSON := []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{}`)
	for range 49999 {
		emptyJSON = append(emptyJSON, ",{}"...)
	}
	emptyJSON = append(emptyJSON, "]}]}]}"...)
	tests := []struct {
		name string
		enc  encoding
		body []byte
		req  func() unmarshaler
	}{
		{"empty spans", protobufEncoding, emptySpans(50000), func() unmarshaler { return ptraceotlp.NewExportRequest() }},
		{"empty attributes", protobufEncoding, emptyAttributes(50000), func() unmarshaler { return ptraceotlp.NewExportRequest() }},
		{"nested values", protobufEncoding, nestedValue(maxNesting - 8), func() unmarshaler { return ptraceotlp.NewExportRequest() }},
		{"spans", protobufEncoding, must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(2000)).MarshalProto()), func() unmarshaler { return ptraceotlp.NewExportRequest() }},
		{"attribute spans", protobufEncoding, must(t)(ptraceotlp.NewExportRequestFromTraces(attributeSpans(2000)).MarshalProto()), func() unmarshaler { return ptraceotlp.NewExportRequest() }},
		{"metrics", protobufEncoding, must(t)(pmetricotlp.NewExportRequestFromMetrics(testMetrics()).MarshalProto()), func() unmarshaler { return pmetricotlp.NewExportRequest() }},
		{"logs", protobufEncoding, must(t)(plogotlp.NewExportRequestFromLogs(testLogs(2000)).MarshalProto()), func() unmarshaler { return plogotlp.NewExportRequest() }},
		{"empty spans, JSON", jsonEncoding, emptyJSON, func() unmarshaler { return ptraceotlp.NewExportRequest() }},
		{"attribute spans, JSON", jsonEncoding, tracesJSON(attributeSpans(2000)), func() unmarshaler { return ptraceotlp.NewExportRequest() }},
		{"logs, JSON", jsonEncoding, must(t)(plogotlp.NewExportRequestFromLogs(testLogs(2000)).MarshalJSON()), func() unmarshaler { return plogotlp.NewExportRequest() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cost, err := pdataCost(tt.enc, tt.body)
			if err != nil {
				t.Fatalf("pdataCost: %v", err)
			}
			req := tt.req()
			var derr error
			alloc := allocated(func() {
				if tt.enc == jsonEncoding {
					derr = req.UnmarshalJSON(tt.body)
				} else {
					derr = req.UnmarshalProto(tt.body)
				}
			})
			if derr != nil {
				t.Fatalf("pdata: %v", derr)
			}
			t.Logf("%d bytes: pdata allocated %d, charged %d (%.1f×)", len(tt.body), alloc, cost, float64(cost)/float64(alloc))
			if uint64(cost) < alloc {
				t.Errorf("charged %d bytes for a payload pdata allocated %d for", cost, alloc)
			}
		})
	}
}

// TestPdataCostNesting refuses payloads nested deeper than maxNesting and
// accepts those just under it.
func TestPdataCostNesting(t *testing.T) {
	if _, err := pdataCost(protobufEncoding, nestedValue(maxNesting-8)); err != nil {
		t.Errorf("nested %d deep: %v", maxNesting-8, err)
	}
	if _, err := pdataCost(protobufEncoding, nestedValue(maxNesting+4)); !errors.Is(err, errTooDeep) {
		t.Errorf("nested %d deep: %v, want %v", maxNesting+4, err, errTooDeep)
	}
	deepJSON := []byte(`{"a":`)
	for range maxNesting {
		deepJSON = append(deepJSON, '[')
	}
	if _, err := pdataCost(jsonEncoding, deepJSON); !errors.Is(err, errTooDeep) {
		t.Errorf("JSON nested %d deep: %v, want %v", maxNesting+1, err, errTooDeep)
	}
	if n, err := jsonObjects([]byte(`{"a":"{[\"}","b":[{},{}]}`)); err != nil || n != 4 {
		t.Errorf("jsonObjects = %d, %v; want 4 (braces in strings do not count)", n, err)
	}
}

// TestAmplifiedPayloads sends payloads that would make pdata hold a
// hundred times their size (a million empty spans: 2 MiB on the wire,
// and 10 KiB gzipped) to a sink with the default limits, over OTLP/HTTP
// and OTLP/gRPC: each is refused as needing more than the sink's memory,
// having cost little.
func TestAmplifiedPayloads(t *testing.T) {
	s := New()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	body := emptySpans(1 << 20)
	zipped := gz(t, body)
	conn := grpcConn(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(emptySpans(1 << 10)); err != nil {
		t.Fatal(err)
	}

	runtime.GC()
	alloc := allocated(func() {
		if resp := send(t, http.MethodPost, s.URL()+"/v1/traces", ctPB, "", body); resp.status != http.StatusRequestEntityTooLarge {
			t.Errorf("empty spans: status %d, want 413 (%s)", resp.status, resp.body)
		}
		if resp := send(t, http.MethodPost, s.URL()+"/v1/traces", ctPB, "gzip", zipped); resp.status != http.StatusRequestEntityTooLarge {
			t.Errorf("empty spans, gzipped: status %d, want 413 (%s)", resp.status, resp.body)
		}
	})
	// The client's and the sink's copies of the bodies, a few MiB; pdata
	// would have taken 250 MiB each.
	t.Logf("the sink and its client allocated %.1f MiB", float64(alloc)/(1<<20))
	if alloc > 64<<20 {
		t.Errorf("refusing the payloads allocated %d MiB, want under 64", alloc>>20)
	}
	// Over gRPC: the bytes as they are (decoding them in the test would
	// take the 250 MiB).
	_, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, req) // 1024 empty spans: accepted
	if err != nil {
		t.Fatalf("1024 empty spans over gRPC: %v", err)
	}
	var reply []byte
	err = conn.Invoke(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", body, &reply, grpc.ForceCodec(rawCodec{}))
	if got := status.Code(err); got != codes.ResourceExhausted {
		t.Errorf("a million empty spans over gRPC: %v (code %v), want ResourceExhausted", err, got)
	}
	if c := s.Counts(); c.Spans != 1024 || c.Rejected != 3 {
		t.Errorf("Counts() = %+v, want 1024 spans, 3 rejected", c)
	}
}
