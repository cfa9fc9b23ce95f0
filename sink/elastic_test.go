package sink

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// ndjson encodes each event as one line of JSON, as Elastic's agents write
// an intake v2 request body.
func ndjson(t testing.TB, events ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, ev := range events {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("encode intake event: %v", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// intakeEvents are intake v2 events, one of each type, with the fields the
// APM Server requires of each (github.com/elastic/apm-server, docs/spec/v2).
type intakeEvents struct {
	metadata, transaction, span, error, metricset, log map[string]any
}

// newIntakeEvents returns one event of each type.
func newIntakeEvents() intakeEvents {
	var ev intakeEvents
	ev.metadata = map[string]any{"metadata": map[string]any{
		"service": map[string]any{
			"name":     "checkout",
			"agent":    map[string]any{"name": "java", "version": "1.55.1"},
			"language": map[string]any{"name": "Java", "version": "17.0.15"},
			"runtime":  map[string]any{"name": "Java", "version": "17.0.15"},
		},
		"process": map[string]any{"pid": 4242, "title": "java"},
		"system":  map[string]any{"architecture": "amd64", "detected_hostname": "host", "platform": "Linux"},
	}}
	ev.transaction = map[string]any{"transaction": map[string]any{
		"id": "945254c567a5417e", "trace_id": "0123456789abcdef0123456789abcdef",
		"name": "GET /front", "type": "request", "duration": 32.592981, "timestamp": 1535655207154000,
		"result": "HTTP 2xx", "outcome": "success", "sampled": true,
		"span_count": map[string]any{"started": 1, "dropped": 0},
		"context": map[string]any{"request": map[string]any{"method": "GET",
			"url": map[string]any{"full": "http://127.0.0.1:8080/front", "pathname": "/front"}}},
	}}
	ev.span = map[string]any{"span": map[string]any{
		"id": "0aaaaaaaaaaaaaaa", "transaction_id": "945254c567a5417e", "parent_id": "945254c567a5417e",
		"trace_id": "0123456789abcdef0123456789abcdef", "name": "GET 127.0.0.1", "type": "external",
		"subtype": "http", "timestamp": 1535655207154100, "duration": 3.781912, "outcome": "success",
		"stacktrace": []any{map[string]any{"filename": "App.java", "classname": "App", "function": "get", "lineno": 28}},
		"context":    map[string]any{"http": map[string]any{"method": "GET", "status_code": 200, "url": "http://127.0.0.1:8080/back"}},
	}}
	ev.error = map[string]any{"error": map[string]any{
		"id": "9876543210abcdef", "timestamp": 1535655207154200, "trace_id": "0123456789abcdef0123456789abcdef",
		"parent_id": "945254c567a5417e", "transaction_id": "945254c567a5417e",
		"exception": map[string]any{"message": "connection refused", "type": "java.net.ConnectException"},
	}}
	ev.metricset = map[string]any{"metricset": map[string]any{
		"timestamp": 1535655207154300, "tags": map[string]any{"name": "G1 Old Gen"},
		"samples": map[string]any{
			"jvm.memory.heap.pool.used":      map[string]any{"value": 1.2e7},
			"jvm.memory.heap.pool.committed": map[string]any{"value": 2.4e7},
			"jvm.memory.heap.pool.max":       map[string]any{"value": 6.3e9},
		},
	}}
	ev.log = map[string]any{"log": map[string]any{
		"@timestamp": "2024-01-01T00:00:00.000Z", "message": "order placed", "log.level": "info",
	}}
	return ev
}

func TestElasticIntake(t *testing.T) {
	ev := newIntakeEvents()
	full := ndjson(t, ev.metadata, ev.transaction, ev.span, ev.span, ev.error,
		ev.metricset, ev.metricset, ev.log, ev.transaction)
	fullCounts := Counts{Spans: 4, MetricPoints: 6, LogRecords: 2}
	const ndjsonType = "application/x-ndjson"
	isIntakeError := func(t *testing.T, resp response) {
		t.Helper()
		var doc struct {
			Accepted *int `json:"accepted"`
			Errors   []struct {
				Message string `json:"message"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(resp.body, &doc); err != nil || doc.Accepted == nil ||
			len(doc.Errors) != 1 || doc.Errors[0].Message == "" {
			t.Errorf("error body %q is not an APM Server error document (%v)", resp.body, err)
		}
	}
	bad := func(name string, body []byte) requestCase {
		return requestCase{name: name, path: "/intake/v2/events", contentType: ndjsonType, body: body,
			wantStatus: 400, wantType: "application/json", check: isIntakeError}
	}
	tests := []requestCase{
		{name: "events", path: "/intake/v2/events", contentType: ndjsonType, body: full,
			wantStatus: 202, wantBody: "", want: fullCounts},
		{name: "events gzip", path: "/intake/v2/events", contentType: ndjsonType, compress: gz, encoding: "gzip", body: full,
			wantStatus: 202, want: fullCounts},
		{name: "events deflate", path: "/intake/v2/events", contentType: ndjsonType, compress: zl, encoding: "deflate", body: full,
			wantStatus: 202, want: fullCounts},
		{name: "flushed", path: "/intake/v2/events?flushed=true", contentType: ndjsonType, body: full,
			wantStatus: 202, want: fullCounts},
		{name: "verbose", path: "/intake/v2/events?verbose", contentType: ndjsonType, body: full,
			wantStatus: 202, wantType: "application/json", wantBody: `{"accepted":8}`, want: fullCounts},
		{name: "metadata only", path: "/intake/v2/events", contentType: ndjsonType, body: ndjson(t, ev.metadata),
			wantStatus: 202},
		{name: "blank lines and CRLF", path: "/intake/v2/events", contentType: ndjsonType,
			body:       bytes.ReplaceAll(append([]byte("\n"), ndjson(t, ev.metadata, ev.span)...), []byte("\n"), []byte("\r\n\r\n")),
			wantStatus: 202, want: Counts{Spans: 1}},

		bad("empty body", nil),
		bad("no metadata", ndjson(t, ev.transaction, ev.span)),
		bad("metadata twice", ndjson(t, ev.metadata, ev.span, ev.metadata)),
		bad("unknown event type", ndjson(t, ev.metadata, map[string]any{"profile": map[string]any{}})),
		bad("two event types on a line", ndjson(t, ev.metadata,
			map[string]any{"span": ev.span["span"], "transaction": ev.transaction["transaction"]})),
		bad("event is not an object", ndjson(t, ev.metadata, map[string]any{"span": 5})),
		bad("null event", ndjson(t, ev.metadata, map[string]any{"span": nil})),
		bad("samples not objects", ndjson(t, ev.metadata,
			map[string]any{"metricset": map[string]any{"samples": map[string]any{"x": 1}}})),
		bad("truncated line", append(ndjson(t, ev.metadata, ev.span), `{"span":{"id":`...)),
		bad("line not JSON", append(ndjson(t, ev.metadata), "span id=1\n"...)),
		{name: "garbage deflate", path: "/intake/v2/events", contentType: ndjsonType, encoding: "deflate", body: full,
			wantStatus: 400, wantType: "application/json", check: isIntakeError},
		{name: "GET intake", method: http.MethodGet, path: "/intake/v2/events",
			wantStatus: 405, wantType: "application/json", check: isIntakeError},
	}
	runRequestCases(t, tests)
}

func TestElasticServerInfoAndConfig(t *testing.T) {
	isServerInfo := func(t *testing.T, resp response) {
		t.Helper()
		var info struct {
			Version      string `json:"version"`
			PublishReady bool   `json:"publish_ready"`
		}
		if err := json.Unmarshal(resp.body, &info); err != nil || info.Version == "" || !info.PublishReady {
			t.Errorf("server information %q has no version or is not publish_ready (%v)", resp.body, err)
		}
	}
	maxAge := func(t *testing.T, resp response) {
		t.Helper()
		if cc := resp.header.Get("Cache-Control"); cc != "max-age=30, must-revalidate" {
			t.Errorf("Cache-Control = %q, want max-age=30, must-revalidate", cc)
		}
		if resp.header.Get("Etag") != elasticConfigETag {
			t.Errorf("Etag = %q, want %q", resp.header.Get("Etag"), elasticConfigETag)
		}
	}
	configReq := []byte(`{"service":{"name":"checkout","environment":"test"}}`)
	tests := []requestCase{
		{name: "server information", method: http.MethodGet, path: "/",
			wantStatus: 200, wantType: "application/json", check: isServerInfo},
		{name: "HEAD server information", method: http.MethodHead, path: "/",
			wantStatus: 200, wantType: "application/json"},
		{name: "config POST", path: "/config/v1/agents", contentType: "application/json", body: configReq,
			wantStatus: 200, wantType: "application/json", wantBody: "{}", check: maxAge},
		{name: "config GET", method: http.MethodGet, path: "/config/v1/agents?service.name=checkout",
			wantStatus: 200, wantType: "application/json", wantBody: "{}", check: maxAge},
		{name: "config unchanged", path: "/config/v1/agents", contentType: "application/json", body: configReq,
			header: map[string]string{"If-None-Match": elasticConfigETag}, wantStatus: 304, check: maxAge},
		{name: "config stale", path: "/config/v1/agents", contentType: "application/json", body: configReq,
			header: map[string]string{"If-None-Match": `"other"`}, wantStatus: 200, wantBody: "{}", check: maxAge},
		{name: "config PUT", method: http.MethodPut, path: "/config/v1/agents", body: configReq,
			wantStatus: 405},
	}
	runRequestCases(t, tests)
}
