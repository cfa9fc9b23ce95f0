package sink

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// The fuzz targets feed each decoder arbitrary bodies through the sink's
// own request path (serveHTTP, with a recorder for a connection), so that
// limits, decompression and counting are fuzzed with it. Whatever the body,
// the sink must not panic, must answer, and must keep its books: one
// request, counted either accepted (its bytes in Bytes) or rejected (its
// bytes in RejectedBytes, nothing else counted), and every byte of memory
// and every decode slot given back.

// fuzzLimit is the body limit, raw and decoded, of the sinks fuzz targets
// use, so that a bomb the fuzzer finds costs little.
const fuzzLimit = 256 << 10

// fuzzSink returns a sink ready to serve requests through serveHTTP,
// without a listener.
func fuzzSink(t testing.TB) *Sink {
	t.Helper()
	s := New()
	s.lim.maxBody, s.lim.maxDecoded = fuzzLimit, fuzzLimit
	resp, err := newResponses()
	if err != nil {
		t.Fatal(err)
	}
	s.resp = resp
	s.mem, s.slots = newBudget(s.lim)
	return s
}

// fuzzRequest serves one request through a fresh sink, checks the sink's
// books and returns the status and counts.
func fuzzRequest(t *testing.T, target, contentType, contentEncoding string, body []byte) (int, Counts) {
	t.Helper()
	s := fuzzSink(t)
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, target, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if contentEncoding != "" {
		req.Header.Set("Content-Encoding", contentEncoding)
	}
	rec := httptest.NewRecorder()
	s.serveHTTP(rec, req)
	c := s.Counts()
	status := rec.Code

	read := uint64(len(body))
	if len(body) > fuzzLimit {
		read = 0 // refused on its Content-Length
	}
	if c.Requests != 1 {
		t.Fatalf("Requests = %d, want 1", c.Requests)
	}
	if rejected := status >= 400; rejected != (c.Rejected == 1) || c.Rejected > 1 {
		t.Fatalf("status %d but Rejected = %d", status, c.Rejected)
	}
	if c.Bytes+c.RejectedBytes != read {
		t.Fatalf("Bytes %d + RejectedBytes %d, want the %d read", c.Bytes, c.RejectedBytes, read)
	}
	if c.Rejected == 1 && (c.Bytes != 0 || c.Spans != 0 || c.MetricPoints != 0 || c.LogRecords != 0 || c.Profiles != 0) {
		t.Fatalf("rejected request counted as received: %+v", c)
	}
	if !s.mem.TryAcquire(s.lim.memory) || !s.slots.TryAcquire(int64(s.lim.decodes)) {
		t.Fatal("the request kept memory or a decode slot of the sink's budget")
	}
	return status, c
}

// addOTLPSeeds adds an export request of m's signal as protobuf and JSON,
// plain and compressed.
func addOTLPSeeds(f *testing.F, m interface {
	MarshalProto() ([]byte, error)
	MarshalJSON() ([]byte, error)
}) {
	pb := must(f)(m.MarshalProto())
	js := must(f)(m.MarshalJSON())
	for _, enc := range []string{"", "gzip"} {
		for _, seed := range []struct {
			b    []byte
			json bool
		}{{pb, false}, {js, true}, {nil, false}, {[]byte("{}"), true}} {
			b := seed.b
			if enc == "gzip" {
				b = gz(f, b)
			}
			f.Add(b, seed.json, enc)
		}
	}
}

// fuzzOTLP fuzzes one OTLP/HTTP endpoint; a body that is accepted must
// decode with pdata to the count the sink made of it.
func fuzzOTLP(f *testing.F, path string, count func(body []byte, asJSON bool) (uint64, error), counted func(Counts) uint64) {
	f.Fuzz(func(t *testing.T, body []byte, asJSON bool, encoding string) {
		ct := ctPB
		if asJSON {
			ct = ctJSON
		}
		status, c := fuzzRequest(t, path, ct, encoding, body)
		if status != http.StatusOK {
			return
		}
		plain := stdlibDecompress(t, encoding, body)
		var (
			n   uint64
			err error
		)
		alloc := allocated(func() { n, err = count(plain, asJSON) })
		if err != nil || n != counted(c) {
			t.Fatalf("accepted: counted %d, pdata decodes %d (%v)", counted(c), n, err)
		}
		enc := protobufEncoding
		if asJSON {
			enc = jsonEncoding
		}
		if cost, err := pdataCost(enc, plain); err != nil || uint64(cost) < alloc {
			t.Fatalf("charged %d bytes (%v) for a payload pdata allocated %d for", cost, err, alloc)
		}
	})
}

// stdlibDecompress decompresses the body of an accepted request with the
// standard library's readers, as Content-Encoding enc names.
func stdlibDecompress(t *testing.T, enc string, body []byte) []byte {
	t.Helper()
	var (
		zr  io.Reader
		err error
	)
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "", "identity":
		return body
	case "gzip", "x-gzip":
		zr, err = gzip.NewReader(bytes.NewReader(body))
	case "deflate":
		if zlibHeader(body) {
			zr, err = zlib.NewReader(bytes.NewReader(body))
		} else {
			zr = flate.NewReader(bytes.NewReader(body))
		}
	default:
		t.Fatalf("accepted a body in Content-Encoding %q", enc)
	}
	if err != nil {
		t.Fatalf("accepted a %s body that does not open: %v", enc, err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("accepted a %s body that does not decompress: %v", enc, err)
	}
	return plain
}

func FuzzOTLPTraces(f *testing.F) {
	addOTLPSeeds(f, ptraceotlp.NewExportRequestFromTraces(testTraces(5)))
	fuzzOTLP(f, "/v1/traces", func(b []byte, asJSON bool) (uint64, error) {
		req := ptraceotlp.NewExportRequest()
		if err := unmarshalOTLP(req, b, asJSON); err != nil {
			return 0, err
		}
		return uint64(req.Traces().SpanCount()), nil
	}, func(c Counts) uint64 { return c.Spans })
}

func FuzzOTLPMetrics(f *testing.F) {
	addOTLPSeeds(f, pmetricotlp.NewExportRequestFromMetrics(testMetrics()))
	fuzzOTLP(f, "/v1/metrics", func(b []byte, asJSON bool) (uint64, error) {
		req := pmetricotlp.NewExportRequest()
		if err := unmarshalOTLP(req, b, asJSON); err != nil {
			return 0, err
		}
		return uint64(req.Metrics().DataPointCount()), nil
	}, func(c Counts) uint64 { return c.MetricPoints })
}

func FuzzOTLPLogs(f *testing.F) {
	addOTLPSeeds(f, plogotlp.NewExportRequestFromLogs(testLogs(3)))
	fuzzOTLP(f, "/v1/logs", func(b []byte, asJSON bool) (uint64, error) {
		req := plogotlp.NewExportRequest()
		if err := unmarshalOTLP(req, b, asJSON); err != nil {
			return 0, err
		}
		return uint64(req.Logs().LogRecordCount()), nil
	}, func(c Counts) uint64 { return c.LogRecords })
}

// unmarshalOTLP decodes b into req as protobuf or JSON.
func unmarshalOTLP(req interface {
	UnmarshalProto([]byte) error
	UnmarshalJSON([]byte) error
}, b []byte, asJSON bool) error {
	if asJSON {
		return req.UnmarshalJSON(b)
	}
	return req.UnmarshalProto(b)
}

func FuzzZipkin(f *testing.F) {
	for _, b := range []string{`[]`, `[{}]`, `[{"traceId":"1","id":"2","name":"get","timestamp":1,"duration":2,"localEndpoint":{"serviceName":"a"}}]`, `{}`, `[1]`, `[{},`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, c := fuzzRequest(t, "/api/v2/spans", ctJSON, "", body)
		if status == http.StatusAccepted && c.Spans > uint64(len(body))/2 {
			t.Fatalf("%d spans in %d bytes: each needs at least {}", c.Spans, len(body))
		}
	})
}

func FuzzElasticIntake(f *testing.F) {
	ev := newIntakeEvents()
	f.Add(ndjson(f, ev.metadata, ev.transaction, ev.span, ev.error, ev.metricset, ev.log))
	f.Add(ndjson(f, ev.metadata))
	f.Add(ndjson(f, ev.transaction))
	f.Add([]byte("{\"metadata\":{}}\n\n{\"span\":{}}\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		status, c := fuzzRequest(t, "/intake/v2/events", "application/x-ndjson", "", body)
		if status == http.StatusAccepted && c.Spans+c.LogRecords > uint64(len(body))/4 {
			t.Fatalf("%d events in %d bytes", c.Spans+c.LogRecords, len(body))
		}
	})
}

func FuzzDatadogV04(f *testing.F) {
	f.Add(msgpackOf(f, []any{[]any{ddSpan(1, 10, 0, "GET /front"), ddSpan(1, 11, 10, "GET /back")}, []any{ddSpan(2, 20, 0, "GET /x")}}))
	f.Add(msgpackOf(f, []any{}))
	f.Add(msgpackOf(f, []any{[]any{nil}}))
	f.Fuzz(func(t *testing.T, body []byte) {
		status, c := fuzzRequest(t, "/v0.4/traces", "application/msgpack", "", body)
		if status == http.StatusOK && c.Spans > uint64(len(body)) {
			t.Fatalf("%d spans in %d bytes", c.Spans, len(body))
		}
	})
}

func FuzzDatadogV05(f *testing.F) {
	strs := []any{"checkout", "http.request", "GET /front", "http.method", "GET", "_sampling_priority_v1", "http"}
	f.Add(msgpackOf(f, []any{strs, []any{[]any{ddSpanV05(1, 10, 0), ddSpanV05(1, 11, 10)}}}))
	f.Add(msgpackOf(f, []any{[]any{}, []any{}}))
	f.Fuzz(func(t *testing.T, body []byte) {
		status, c := fuzzRequest(t, "/v0.5/traces", "application/msgpack", "", body)
		if status == http.StatusOK && c.Spans > uint64(len(body))/datadogSpanFields {
			t.Fatalf("%d spans in %d bytes", c.Spans, len(body))
		}
	})
}

func FuzzPyroscope(f *testing.F) {
	// The recording in testdata cut to its first chunk's header (and the
	// chunk to it), so that the seeds stay small: the fuzzer minimizes
	// every input that finds new code, which takes long for large ones.
	_, jfr := testJFR(f)
	jfr = bytes.Clone(jfr[:jfrHeaderSize])
	binary.BigEndian.PutUint64(jfr[8:], jfrHeaderSize)
	jfrGz := gz(f, jfr)
	pp := testPprof(f)
	jfrForm, jfrType := multipartBody(f, formPart{"jfr", jfrGz}, formPart{"labels", []byte("{}")})
	ppForm, ppType := multipartBody(f, formPart{"profile", pp}, formPart{"sample_type_config", []byte(`{}`)})
	f.Add("jfr", jfrType, jfrForm)
	f.Add("jfr", "application/octet-stream", jfr)
	f.Add("pprof", ppType, ppForm)
	f.Add("pprof", "application/octet-stream", pp)
	f.Add("", "text/plain", []byte("main;work;burn 42\nmain;idle 7\n"))
	f.Add("lines", "text/plain", []byte("main;work\n"))
	f.Fuzz(func(t *testing.T, format, contentType string, body []byte) {
		status, c := fuzzRequest(t, ingestPath(format), contentType, "", body)
		if status == http.StatusOK && c.Profiles != 1 {
			t.Fatalf("accepted, with %d profiles counted, want 1", c.Profiles)
		}
	})
}

// FuzzDecompress fuzzes the decompression path: arbitrary bytes as gzip,
// deflate (zlib or bare) and identity, and, compressed by the test, data
// that must come back unchanged when it fits the limit.
func FuzzDecompress(f *testing.F) {
	plain := []byte(`[{"traceId":"1","id":"2"}]`)
	f.Add(gz(f, plain), uint8(gzipped), false)
	f.Add(zl(f, plain), uint8(deflated), false)
	f.Add(fl(f, plain), uint8(deflated), false)
	f.Add(plain, uint8(gzipped), true)
	f.Add(plain, uint8(deflated), true)
	f.Add(plain, uint8(identity), false)
	f.Add(gzipBomb(f, 1<<20), uint8(gzipped), false)
	f.Fuzz(func(t *testing.T, data []byte, kind uint8, compress bool) {
		c := compression(kind % 3)
		raw := data
		if compress {
			switch c {
			case gzipped:
				raw = gz(t, data)
			case deflated:
				raw = zl(t, data)
			}
		}
		s := fuzzSink(t)
		l := s.newLease(context.Background())
		out, rerr := s.decompress(c, raw, l)
		if rerr == nil && c != identity && int64(len(out)) > s.lim.maxDecoded {
			t.Fatalf("decompressed %d bytes, over the %d limit", len(out), s.lim.maxDecoded)
		}
		if rerr == nil && l.held < int64(len(out)) && c != identity {
			t.Fatalf("decompressed %d bytes but charged %d", len(out), l.held)
		}
		if compress && len(data) <= fuzzLimit && (rerr != nil || !bytes.Equal(out, data)) {
			t.Fatalf("round trip: got %d bytes (%v), want the %d compressed", len(out), rerr, len(data))
		}
		if compress && len(data) > fuzzLimit && rerr == nil {
			t.Fatalf("%d bytes decompressed, over the %d limit", len(data), fuzzLimit)
		}
		l.release()
		if !s.mem.TryAcquire(s.lim.memory) {
			t.Fatal("memory kept after release")
		}
	})
}

func FuzzSkyWalking(f *testing.F) {
	paths := []string{"/v3/segment", "/v3/segments", "/v3/logs", "/v3/management/keepAlive"}
	for _, b := range []string{swSegment, `{}`, `{"spans":[]}`, `{"spans":[{}]}`, `[` + swSegment + `]`, `[{},{}]`, `{"spans":[`} {
		for i := range paths {
			f.Add(uint8(i), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		status, c := fuzzRequest(t, paths[int(which)%len(paths)], ctJSON, "", body)
		if status == http.StatusOK && c.Spans+c.LogRecords > uint64(len(body))/2 {
			t.Fatalf("%d spans and %d logs in %d bytes: each needs at least {}", c.Spans, c.LogRecords, len(body))
		}
		if status >= 400 && c.Spans+c.LogRecords > 0 {
			t.Fatalf("status %d, yet %d spans and %d logs counted", status, c.Spans, c.LogRecords)
		}
	})
}

// FuzzDatadogStats feeds the Datadog v0.6 stats endpoint arbitrary bodies,
// plain and gzipped: never a panic, and stats count no spans.
func FuzzDatadogStats(f *testing.F) {
	stats := msgpackOf(f, map[string]any{"Env": "test", "Lang": "java", "Sequence": uint64(1),
		"Stats": []any{map[string]any{"Start": uint64(1), "Duration": uint64(10), "Stats": []any{map[string]any{"Service": "s", "Hits": uint64(2), "OkSummary": []byte{0x0a}}}}}})
	f.Add(stats, "")
	f.Add(gz(f, stats), "gzip")
	f.Add(msgpackOf(f, map[string]any{}), "")
	f.Add(msgpackOf(f, []any{1}), "")
	f.Fuzz(func(t *testing.T, body []byte, encoding string) {
		status, c := fuzzRequest(t, "/v0.6/stats", "application/msgpack", encoding, body)
		if status == http.StatusOK && c.Spans != 0 {
			t.Fatalf("stats counted %d spans", c.Spans)
		}
	})
}

// FuzzGRPC feeds the OTLP/gRPC path arbitrary messages behind a frame
// header (compressed or not, with gzip named or not) and arbitrary
// framing: never a panic, one request counted, and every byte of memory
// and every decode slot given back.
func FuzzGRPC(f *testing.F) {
	pb := must(f)(ptraceotlp.NewExportRequestFromTraces(testTraces(3)).MarshalProto())
	frame := func(flag byte, msg []byte) []byte {
		b := make([]byte, 5, 5+len(msg))
		b[0] = flag
		binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
		return append(b, msg...)
	}
	f.Add(frame(0, pb), "", "/opentelemetry.proto.collector.trace.v1.TraceService/Export")
	f.Add(frame(1, gz(f, pb)), "gzip", "/opentelemetry.proto.collector.trace.v1.TraceService/Export")
	f.Add(frame(1, pb), "", "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export")
	f.Add(frame(0, nil), "", "/opentelemetry.proto.collector.logs.v1.LogsService/Export")
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff}, "", "/opentelemetry.proto.collector.trace.v1.TraceService/Export")
	f.Add([]byte{0, 0, 0}, "gzip", "/x")
	f.Fuzz(func(t *testing.T, body []byte, grpcEncoding, path string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		s := fuzzSink(t)
		s.grpc = s.newGRPCServer()
		req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "http://sink"+fuzzPath(path), bytes.NewReader(body))
		req.ProtoMajor, req.ProtoMinor, req.Proto = 2, 0, "HTTP/2.0"
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
		if grpcEncoding != "" {
			req.Header.Set("Grpc-Encoding", grpcEncoding)
		}
		rec := httptest.NewRecorder()
		s.serveHTTP(rec, req)
		if c := s.Counts(); c.Requests != 1 || c.Bytes+c.RejectedBytes > uint64(len(body)) {
			t.Fatalf("counts %+v for a %d-byte body", c, len(body))
		}
		if !s.mem.TryAcquire(s.lim.memory) || !s.slots.TryAcquire(int64(s.lim.decodes)) {
			t.Fatal("the request kept memory or a decode slot of the sink's budget")
		}
	})
}

// fuzzPath makes a fuzzed path one a request line can carry.
func fuzzPath(p string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r >= 0x7f || r == '?' || r == '#' || r == '%' {
			return 'x'
		}
		return r
	}, p)
}
