package sink

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// testLimit is the body limit, raw and decoded, of the sinks tests start,
// so that oversized bodies are cheap to send.
const testLimit = 64 << 10

// startSink starts a sink with body limits of testLimit on a free loopback
// port and closes it when the test ends.
func startSink(t *testing.T) *Sink {
	t.Helper()
	return startSinkLimit(t, testLimit)
}

// startSinkLimit is startSink with body limits of limit.
func startSinkLimit(t *testing.T, limit int64) *Sink {
	t.Helper()
	s := New()
	s.lim.maxBody, s.lim.maxDecoded = limit, limit
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// testClient returns a client bounded so that a hung sink fails the test
// instead of hanging it.
func testClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second}
}

// response is what a test request got back.
type response struct {
	status      int
	contentType string
	header      http.Header
	body        []byte
}

// send makes one request to the sink and reads the whole response.
func send(t *testing.T, method, url, contentType, contentEncoding string, body []byte) response {
	t.Helper()
	return sendWith(t, method, url, contentType, contentEncoding, nil, body)
}

// sendWith is send with more request headers.
func sendWith(t *testing.T, method, url, contentType, contentEncoding string, header map[string]string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if contentEncoding != "" {
		req.Header.Set("Content-Encoding", contentEncoding)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := testClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	return response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), header: resp.Header, body: b}
}

// zl compresses b as HTTP's deflate encoding: a zlib stream.
func zl(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatalf("zlib: %v", err)
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("zlib: %v", err)
	}
	return buf.Bytes()
}

// fl compresses b as bare DEFLATE data, without zlib's header.
func fl(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.DefaultCompression)
	if err != nil {
		t.Fatalf("flate: %v", err)
	}
	if _, err := fw.Write(b); err != nil {
		t.Fatalf("flate: %v", err)
	}
	if err := fw.Close(); err != nil {
		t.Fatalf("flate: %v", err)
	}
	return buf.Bytes()
}

// gz compresses b with gzip.
func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatalf("gzip: %v", err)
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("gzip: %v", err)
	}
	return buf.Bytes()
}

// testTraces returns traces holding n spans over two resources.
func testTraces(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range 2 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
		ss := rs.ScopeSpans().AppendEmpty()
		for i := r; i < n; i += 2 {
			sp := ss.Spans().AppendEmpty()
			sp.SetName(fmt.Sprintf("span-%d", i))
			sp.SetTraceID(pcommon.TraceID{1, byte(i + 1)})
			sp.SetSpanID(pcommon.SpanID{2, byte(i + 1)})
			sp.SetStartTimestamp(pcommon.Timestamp(1e9))
			sp.SetEndTimestamp(pcommon.Timestamp(2e9))
		}
	}
	return td
}

// testMetrics returns metrics holding a gauge with 2 points and a sum with
// 3, that is 5 data points.
func testMetrics() pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	g := sm.Metrics().AppendEmpty()
	g.SetName("gauge")
	g.SetEmptyGauge()
	for i := range 2 {
		g.Gauge().DataPoints().AppendEmpty().SetIntValue(int64(i))
	}
	sum := sm.Metrics().AppendEmpty()
	sum.SetName("sum")
	sum.SetEmptySum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i := range 3 {
		sum.Sum().DataPoints().AppendEmpty().SetDoubleValue(float64(i))
	}
	return md
}

// testLogs returns logs holding n log records.
func testLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	for i := range n {
		sl.LogRecords().AppendEmpty().Body().SetStr(fmt.Sprintf("record %d", i))
	}
	return ld
}

// must returns a function that returns b, failing the test if err is not
// nil: must(t)(req.MarshalProto()).
func must(t testing.TB) func(b []byte, err error) []byte {
	return func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		return b
	}
}

// Content types used by the tests.
const (
	ctPB   = "application/x-protobuf"
	ctJSON = "application/json"
)

func TestExportViaOpenTelemetrySDK(t *testing.T) {
	tests := []struct {
		name        string
		compression otlptracehttp.Compression
		encoding    otlptracehttp.Encoding
	}{
		{"protobuf", otlptracehttp.NoCompression, otlptracehttp.EncodingProtobuf},
		{"protobuf gzip", otlptracehttp.GzipCompression, otlptracehttp.EncodingProtobuf},
		{"json", otlptracehttp.NoCompression, otlptracehttp.EncodingJSON},
		{"ctJSON gzip", otlptracehttp.GzipCompression, otlptracehttp.EncodingJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startSink(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			exp, err := otlptracehttp.New(ctx,
				otlptracehttp.WithEndpointURL(s.URL()+"/v1/traces"),
				otlptracehttp.WithCompression(tt.compression),
				otlptracehttp.WithEncoding(tt.encoding),
				otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
			)
			if err != nil {
				t.Fatalf("new exporter: %v", err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
			defer func() {
				if err := tp.Shutdown(ctx); err != nil {
					t.Errorf("shut down tracer provider: %v", err)
				}
			}()
			tracer := tp.Tracer("sink_test")
			for i := range 10 {
				_, sp := tracer.Start(ctx, fmt.Sprintf("span-%d", i))
				sp.End()
			}
			if err := tp.ForceFlush(ctx); err != nil {
				t.Fatalf("ForceFlush: %v", err)
			}
			c := s.Counts()
			if c.Spans != 10 || c.Requests < 1 || c.Bytes == 0 || c.Rejected != 0 {
				t.Errorf("Counts() = %+v, want 10 spans, ≥1 request, >0 bytes, 0 rejected", c)
			}
		})
	}
}

func TestRequests(t *testing.T) {
	traces3 := must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(3)).MarshalJSON())
	traces7pb := must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(7)).MarshalProto())
	metricsPB := must(t)(pmetricotlp.NewExportRequestFromMetrics(testMetrics()).MarshalProto())
	metricsJSON := must(t)(pmetricotlp.NewExportRequestFromMetrics(testMetrics()).MarshalJSON())
	logsPB := must(t)(plogotlp.NewExportRequestFromLogs(testLogs(4)).MarshalProto())
	logsJSON := must(t)(plogotlp.NewExportRequestFromLogs(testLogs(4)).MarshalJSON())
	zipkin2 := []byte(`[
		{"traceId":"5af7183fb1d4cf5f","id":"6b221d5bc9e6496c","name":"get /api","timestamp":1556604172355737,"duration":1431,"kind":"SERVER","localEndpoint":{"serviceName":"backend"}},
		{"traceId":"5af7183fb1d4cf5f","parentId":"6b221d5bc9e6496c","id":"352bff9a74ca9ad2","name":"query","timestamp":1556604172355800,"duration":800,"kind":"CLIENT","localEndpoint":{"serviceName":"backend"}}
	]`)
	// Decompresses to one byte more than the limit, and to exactly the limit.
	bomb := gz(t, make([]byte, testLimit+1))
	atLimit := gz(t, make([]byte, testLimit))
	// Field 1 (resource_spans) claims 127 bytes but 2 follow.
	truncated := []byte{0x0a, 0x7f, 0x01, 0x02}

	tests := []requestCase{
		{name: "traces json", path: "/v1/traces", contentType: ctJSON, body: traces3,
			wantStatus: 200, wantType: ctJSON, want: Counts{Spans: 3}},
		{name: "traces ctJSON gzip", path: "/v1/traces", contentType: ctJSON, compress: gz, encoding: "gzip", body: traces3,
			wantStatus: 200, wantType: ctJSON, want: Counts{Spans: 3}},
		{name: "traces ctJSON charset", path: "/v1/traces", contentType: "application/json; charset=utf-8", body: traces3,
			wantStatus: 200, wantType: ctJSON, want: Counts{Spans: 3}},
		{name: "traces protobuf", path: "/v1/traces", contentType: ctPB, body: traces7pb,
			wantStatus: 200, wantType: ctPB, want: Counts{Spans: 7}},
		{name: "traces protobuf gzip", path: "/v1/traces", contentType: ctPB, compress: gz, encoding: "gzip", body: traces7pb,
			wantStatus: 200, wantType: ctPB, want: Counts{Spans: 7}},
		{name: "traces protobuf deflate", path: "/v1/traces", contentType: ctPB, compress: zl, encoding: "deflate", body: traces7pb,
			wantStatus: 200, wantType: ctPB, want: Counts{Spans: 7}},
		{name: "traces protobuf bare deflate", path: "/v1/traces", contentType: ctPB, compress: fl, encoding: "deflate", body: traces7pb,
			wantStatus: 200, wantType: ctPB, want: Counts{Spans: 7}},
		{name: "traces empty protobuf", path: "/v1/traces", contentType: ctPB, body: nil,
			wantStatus: 200, wantType: ctPB},
		{name: "metrics protobuf", path: "/v1/metrics", contentType: ctPB, body: metricsPB,
			wantStatus: 200, wantType: ctPB, want: Counts{MetricPoints: 5}},
		{name: "metrics protobuf gzip", path: "/v1/metrics", contentType: ctPB, compress: gz, encoding: "gzip", body: metricsPB,
			wantStatus: 200, wantType: ctPB, want: Counts{MetricPoints: 5}},
		{name: "metrics json", path: "/v1/metrics", contentType: ctJSON, body: metricsJSON,
			wantStatus: 200, wantType: ctJSON, want: Counts{MetricPoints: 5}},
		{name: "logs protobuf", path: "/v1/logs", contentType: ctPB, body: logsPB,
			wantStatus: 200, wantType: ctPB, want: Counts{LogRecords: 4}},
		{name: "logs json", path: "/v1/logs", contentType: ctJSON, body: logsJSON,
			wantStatus: 200, wantType: ctJSON, want: Counts{LogRecords: 4}},
		{name: "zipkin", path: "/api/v2/spans", contentType: ctJSON, body: zipkin2,
			wantStatus: 202, want: Counts{Spans: 2}},
		{name: "zipkin gzip", path: "/api/v2/spans", contentType: ctJSON, compress: gz, encoding: "gzip", body: zipkin2,
			wantStatus: 202, want: Counts{Spans: 2}},
		{name: "zipkin no content type", path: "/api/v2/spans", body: zipkin2,
			wantStatus: 202, want: Counts{Spans: 2}},

		{name: "garbage protobuf", path: "/v1/traces", contentType: ctPB, body: []byte("this is not a protobuf payload"),
			wantStatus: 400, wantType: ctPB},
		{name: "truncated protobuf", path: "/v1/traces", contentType: ctPB, body: truncated,
			wantStatus: 400, wantType: ctPB},
		{name: "traces protobuf sent as json", path: "/v1/traces", contentType: ctJSON, body: traces7pb,
			wantStatus: 400, wantType: ctJSON},
		{name: "garbage json", path: "/v1/logs", contentType: ctJSON, body: []byte(`{"resourceLogs": [`),
			wantStatus: 400, wantType: ctJSON},
		{name: "garbage gzip", path: "/v1/metrics", contentType: ctPB, encoding: "gzip", body: []byte("not gzip"),
			wantStatus: 400, wantType: ctPB},
		{name: "garbage deflate", path: "/v1/metrics", contentType: ctPB, encoding: "deflate", body: []byte("not deflate"),
			wantStatus: 400, wantType: ctPB},
		{name: "deflate bomb", path: "/v1/traces", contentType: ctPB, encoding: "deflate", body: zl(t, make([]byte, testLimit+1)),
			wantStatus: 413, wantType: ctPB},
		{name: "gzip bomb", path: "/v1/traces", contentType: ctPB, encoding: "gzip", body: bomb,
			wantStatus: 413, wantType: ctPB},
		{name: "gzip at limit", path: "/v1/traces", contentType: ctPB, encoding: "gzip", body: atLimit,
			wantStatus: 400, wantType: ctPB}, // zeros are not valid OTLP, but not too large
		{name: "body too large", path: "/v1/traces", contentType: ctPB, body: make([]byte, testLimit+1),
			wantStatus: 413, wantType: ctPB},
		{name: "unsupported content type", path: "/v1/traces", contentType: "text/plain", body: traces3,
			wantStatus: 415},
		{name: "missing content type", path: "/v1/traces", body: traces7pb,
			wantStatus: 415},
		{name: "unsupported content encoding", path: "/v1/traces", contentType: ctPB, encoding: "br", body: traces7pb,
			wantStatus: 415, wantType: ctPB},
		{name: "zipkin not an array", path: "/api/v2/spans", contentType: ctJSON, body: []byte(`{"traceId":"1"}`),
			wantStatus: 400},
		{name: "zipkin array of non-objects", path: "/api/v2/spans", contentType: ctJSON, body: []byte(`[1, 2]`),
			wantStatus: 400},
		{name: "zipkin protobuf", path: "/api/v2/spans", contentType: ctPB, body: []byte{0x0a, 0x00},
			wantStatus: 415},
		{name: "unknown path", path: "/v1/profiles", contentType: ctPB, body: traces7pb,
			wantStatus: 404},
		{name: "POST root", path: "/", body: traces7pb, contentType: ctPB,
			wantStatus: 405}, // an OTLP exporter given the base URL as a signal's endpoint
		{name: "trailing slash", path: "/v1/traces/", contentType: ctPB, body: traces7pb,
			wantStatus: 404},
		{name: "GET traces", method: http.MethodGet, path: "/v1/traces",
			wantStatus: 405},
		{name: "PUT zipkin", method: http.MethodPut, path: "/api/v2/spans", contentType: ctJSON, body: zipkin2,
			wantStatus: 405},
	}
	runRequestCases(t, tests)
}

// requestCase is one request to a fresh sink and what it must answer and
// count.
type requestCase struct {
	name        string
	method      string // POST when empty
	path        string // with the query, if any
	contentType string
	header      map[string]string // more request headers
	compress    func(testing.TB, []byte) []byte
	encoding    string // Content-Encoding: sent as is, or naming compress
	body        []byte
	wantStatus  int
	wantType    string                            // response Content-Type prefix; not checked when empty
	wantBody    string                            // response body; not checked when empty
	check       func(t *testing.T, resp response) // more checks of the response; none when nil
	limit       int64                             // body limits, raw and decoded; testLimit when 0
	want        Counts                            // Requests, Bytes and Rejected are filled in below
}

// runRequestCases runs each case as a subtest against a sink of its own.
func runRequestCases(t *testing.T, tests []requestCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = testLimit
			}
			s := startSinkLimit(t, limit)
			body := tt.body
			if tt.compress != nil {
				body = tt.compress(t, tt.body)
			}
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			resp := sendWith(t, method, s.URL()+tt.path, tt.contentType, tt.encoding, tt.header, body)

			if resp.status != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %q)", resp.status, tt.wantStatus, resp.body)
			}
			if tt.wantType != "" && !strings.HasPrefix(resp.contentType, tt.wantType) {
				t.Errorf("Content-Type = %q, want %q (body %q)", resp.contentType, tt.wantType, resp.body)
			}
			if tt.wantBody != "" && string(resp.body) != tt.wantBody {
				t.Errorf("body = %q, want %q", resp.body, tt.wantBody)
			}
			path, _, _ := strings.Cut(tt.path, "?")
			checkBody(t, path, resp)
			if tt.check != nil {
				tt.check(t, resp)
			}

			want := tt.want
			want.Requests = 1
			// The client sends a Content-Length: a body over the limit is
			// refused unread.
			read := uint64(len(body))
			if int64(len(body)) > limit {
				read = 0
			}
			if tt.wantStatus >= 400 {
				want.Rejected, want.RejectedBytes = 1, read
			} else {
				want.Bytes = read
			}
			if got := s.Counts(); got != want {
				t.Errorf("Counts() = %+v, want %+v", got, want)
			}
		})
	}
}

// checkBody checks that an OTLP response body decodes as an
// ExportResponse (success) or a google.rpc.Status (error) in the
// response's encoding.
func checkBody(t *testing.T, path string, resp response) {
	t.Helper()
	if _, ok := route(path).otlpSignal(); !ok {
		return
	}
	isJSON := strings.HasPrefix(resp.contentType, ctJSON)
	if !isJSON && !strings.HasPrefix(resp.contentType, ctPB) {
		return
	}
	if resp.status != http.StatusOK {
		st := &status.Status{}
		var err error
		if isJSON {
			err = protojson.Unmarshal(resp.body, st)
		} else {
			err = proto.Unmarshal(resp.body, st)
		}
		if err != nil {
			t.Errorf("error body %q is not a google.rpc.Status: %v", resp.body, err)
		} else if st.GetCode() == int32(code.Code_OK) || st.GetMessage() == "" {
			t.Errorf("error status = %v, want a code and a message", st)
		}
		return
	}
	type unmarshaler interface {
		UnmarshalProto([]byte) error
		UnmarshalJSON([]byte) error
	}
	var m unmarshaler
	switch path {
	case "/v1/traces":
		m = ptraceotlp.NewExportResponse()
	case "/v1/metrics":
		m = pmetricotlp.NewExportResponse()
	case "/v1/logs":
		m = plogotlp.NewExportResponse()
	default:
		return
	}
	var err error
	if isJSON {
		err = m.UnmarshalJSON(resp.body)
	} else {
		err = m.UnmarshalProto(resp.body)
	}
	if err != nil {
		t.Errorf("response body %q is not an ExportResponse: %v", resp.body, err)
	}
}

func TestCountsAccumulate(t *testing.T) {
	s := startSink(t)
	tracesPB := must(t)(ptraceotlp.NewExportRequestFromTraces(testTraces(3)).MarshalProto())
	zipkin := []byte(`[{"traceId":"1","id":"2"}]`)

	const workers, perWorker = 8, 25
	var (
		wg   sync.WaitGroup
		stop = make(chan struct{})
	)
	// Read Counts concurrently with the requests, as toll's sampler does;
	// -race checks that this is safe.
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = s.Counts()
			}
		}
	}()
	client := testClient()
	for w := range workers {
		path, ct, body, want := "/v1/traces", ctPB, tracesPB, http.StatusOK
		if w%2 == 1 {
			path, ct, body, want = "/api/v2/spans", ctJSON, zipkin, http.StatusAccepted
		}
		wg.Go(func() {
			for range perWorker {
				resp, err := client.Post(s.URL()+path, ct, bytes.NewReader(body))
				if err != nil {
					t.Errorf("POST %s: %v", path, err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("POST %s: status %d, want %d", path, resp.StatusCode, want)
				}
			}
		})
	}
	wg.Wait()
	close(stop)

	n := uint64(workers / 2 * perWorker)
	want := Counts{
		Requests: 2 * n,
		Bytes:    n*uint64(len(tracesPB)) + n*uint64(len(zipkin)),
		Spans:    n*3 + n*1,
	}
	if got := s.Counts(); got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
}

func TestLifecycle(t *testing.T) {
	s := New()
	if got := s.URL(); got != "" {
		t.Errorf("URL() before Start = %q, want empty", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	url := s.URL()
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[1-9][0-9]*$`).MatchString(url) {
		t.Errorf("URL() = %q, want http://127.0.0.1:PORT", url)
	}
	if err := s.Start("127.0.0.1:0"); err == nil {
		t.Error("second Start succeeded, want an error")
	}
	if resp := send(t, http.MethodPost, url+"/api/v2/spans", ctJSON, "", []byte(`[{}]`)); resp.status != http.StatusAccepted {
		t.Fatalf("status before Close = %d, want 202", resp.status)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	req, err := http.NewRequest(http.MethodPost, url+"/api/v2/spans", strings.NewReader(`[{}]`))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := testClient().Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("request after Close got status %d, want a connection error", resp.StatusCode)
	}
	if c := s.Counts(); c.Spans != 1 || c.Requests != 1 {
		t.Errorf("Counts() after Close = %+v, want 1 request, 1 span", c)
	}
	if err := s.Start("127.0.0.1:0"); err == nil {
		t.Error("Start after Close succeeded, want an error")
	}
}

func TestStartBadAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := New()
	err = s.Start(ln.Addr().String())
	if err == nil {
		t.Fatal("Start on a port in use succeeded, want an error")
	}
	if !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("error %q does not name the address", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close after failed Start: %v", err)
	}
}

func TestBaseURL(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4318}, "http://127.0.0.1:4318"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 4318}, "http://127.0.0.1:4318"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 4318}, "http://[::1]:4318"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9411}, "http://[::1]:9411"},
		{&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 80}, "http://10.1.2.3:80"},
	}
	for _, tt := range tests {
		if got := baseURL(tt.addr); got != tt.want {
			t.Errorf("baseURL(%v) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

// A client that connects but never sends a request (as HTTP transports do
// when a dialled connection loses the race to an idle one) must not hold
// up Close: http.Server.Shutdown alone would wait 5 s for it.
func TestCloseWithSilentConnection(t *testing.T) {
	s := New()
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	// Let the server accept the connection and see it as new.
	if resp := send(t, http.MethodPost, s.URL()+"/api/v2/spans", ctJSON, "", []byte(`[]`)); resp.status != http.StatusAccepted {
		t.Fatalf("status = %d, want 202", resp.status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v with a silent connection open, want well under 1s", d)
	}
	if err := conn.SetReadDeadline(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Read(make([]byte, 1)); err == nil {
		t.Errorf("read %d bytes from the silent connection after Close, want it closed", n)
	}
}
