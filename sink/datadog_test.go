package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/tinylib/msgp/msgp"
)

// ddSpan returns a span as a Datadog tracer encodes it for v0.4: a map of
// the fields of pkg/proto/datadog/trace/span.proto.
func ddSpan(traceID, spanID, parentID uint64, name string) map[string]any {
	return map[string]any{
		"service":   "checkout",
		"name":      "http.request",
		"resource":  name,
		"trace_id":  traceID,
		"span_id":   spanID,
		"parent_id": parentID,
		"start":     int64(1_700_000_000_000_000_000),
		"duration":  int64(1_250_000),
		"error":     int32(0),
		"type":      "http",
		"meta":      map[string]any{"http.method": "GET", "http.status_code": "200", "span.kind": "client"},
		"metrics":   map[string]any{"_sampling_priority_v1": 1.0, "_dd.top_level": 1.0, "process_id": 4242.0},
	}
}

// ddSpanV05 returns a span as a tracer encodes it for v0.5: an array of 12
// fields whose strings are indices into the payload's string table.
func ddSpanV05(traceID, spanID, parentID uint64) []any {
	// Indices into the string table of ddPayloadV05.
	return []any{
		uint32(0), uint32(1), uint32(2), // service, name, resource
		traceID, spanID, parentID,
		int64(1_700_000_000_000_000_000), int64(1_250_000), int32(0), // start, duration, error
		indexMap{{3, uint32(4)}},  // meta: http.method → GET
		indexMap{{5, float64(1)}}, // metrics: _sampling_priority_v1 → 1
		uint32(6),                 // type
	}
}

// indexMap is a msgpack map keyed by string-table indices, as a v0.5
// span's meta and metrics are; msgp.AppendIntf encodes maps with string
// keys only.
type indexMap []struct {
	key   uint32
	value any
}

// MarshalMsg appends the map to b.
func (m indexMap) MarshalMsg(b []byte) ([]byte, error) {
	b = msgp.AppendMapHeader(b, uint32(len(m)))
	for _, e := range m {
		b = msgp.AppendUint32(b, e.key)
		var err error
		if b, err = msgp.AppendIntf(b, e.value); err != nil {
			return b, err
		}
	}
	return b, nil
}

// msgpackOf encodes v with the msgp library.
func msgpackOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgp.AppendIntf(nil, v)
	if err != nil {
		t.Fatalf("encode msgpack: %v", err)
	}
	return b
}

func TestDatadogTraces(t *testing.T) {
	v04 := msgpackOf(t, []any{
		[]any{ddSpan(1, 10, 0, "GET /front"), ddSpan(1, 11, 10, "GET /back")},
		[]any{ddSpan(2, 20, 0, "GET /front")},
	})
	strs := []any{"checkout", "http.request", "GET /front", "http.method", "GET", "_sampling_priority_v1", "http"}
	v05 := msgpackOf(t, []any{strs, []any{
		[]any{ddSpanV05(1, 10, 0), ddSpanV05(1, 11, 10)},
		[]any{ddSpanV05(2, 20, 0)},
	}})
	badIndex := ddSpanV05(3, 30, 0)
	badIndex[2] = uint32(len(strs))
	shortSpan := ddSpanV05(3, 30, 0)[:11]
	stringID := ddSpanV05(3, 30, 0)
	stringID[3] = "1"
	// A v0.4 span's field names are strings.
	spanIntKey := msgpackOf(t, []any{[]any{indexMap{{0, "checkout"}}}})
	const mp = "application/msgpack"

	_, state, err := datadogInfoBody()
	if err != nil {
		t.Fatal(err)
	}
	hasState := func(t *testing.T, resp response) {
		t.Helper()
		if got := resp.header.Get(datadogStateHeader); got != state {
			t.Errorf("%s = %q, want %q", datadogStateHeader, got, state)
		}
	}

	tests := []requestCase{
		{name: "v0.4", method: http.MethodPut, path: "/v0.4/traces", contentType: mp, body: v04,
			wantStatus: 200, wantType: "application/json", wantBody: datadogRates, check: hasState, want: Counts{Spans: 3}},
		{name: "v0.4 POST", path: "/v0.4/traces", contentType: mp, body: v04,
			wantStatus: 200, want: Counts{Spans: 3}},
		{name: "v0.4 gzip", method: http.MethodPut, path: "/v0.4/traces", contentType: mp, compress: gz, encoding: "gzip", body: v04,
			wantStatus: 200, want: Counts{Spans: 3}},
		{name: "v0.4 no traces", method: http.MethodPut, path: "/v0.4/traces", contentType: mp, body: msgpackOf(t, []any{}),
			wantStatus: 200, wantBody: datadogRates},
		{name: "v0.4 nil span", method: http.MethodPut, path: "/v0.4/traces", contentType: mp,
			body: msgpackOf(t, []any{[]any{nil, ddSpan(1, 10, 0, "GET /")}}), wantStatus: 200, want: Counts{Spans: 1}},
		{name: "v0.5", method: http.MethodPut, path: "/v0.5/traces", contentType: mp, body: v05,
			wantStatus: 200, wantBody: datadogRates, check: hasState, want: Counts{Spans: 3}},
		{name: "v0.5 empty", method: http.MethodPut, path: "/v0.5/traces", contentType: mp, body: msgpackOf(t, []any{[]any{}, []any{}}),
			wantStatus: 200},

		{name: "v0.4 not an array", method: http.MethodPut, path: "/v0.4/traces", contentType: mp,
			body: msgpackOf(t, map[string]any{"traces": []any{}}), wantStatus: 400},
		{name: "v0.4 trace not an array", method: http.MethodPut, path: "/v0.4/traces", contentType: mp,
			body: msgpackOf(t, []any{ddSpan(1, 10, 0, "GET /")}), wantStatus: 400},
		{name: "v0.4 span not a map", method: http.MethodPut, path: "/v0.4/traces", contentType: mp,
			body: msgpackOf(t, []any{[]any{ddSpanV05(1, 10, 0)}}), wantStatus: 400},
		{name: "v0.4 integer field name", method: http.MethodPut, path: "/v0.4/traces", contentType: mp,
			body: spanIntKey, wantStatus: 400},
		{name: "v0.4 truncated", method: http.MethodPut, path: "/v0.4/traces", contentType: mp,
			body: v04[:len(v04)-5], wantStatus: 400},
		{name: "v0.4 trailing bytes", method: http.MethodPut, path: "/v0.4/traces", contentType: mp,
			body: append(slices.Clip(v04), 0xc0), wantStatus: 400},
		{name: "v0.4 as JSON", method: http.MethodPut, path: "/v0.4/traces", contentType: "application/json",
			body: []byte(`[[{"trace_id":1,"span_id":1}]]`), wantStatus: 415},
		{name: "v0.4 sent to v0.5", method: http.MethodPut, path: "/v0.5/traces", contentType: mp, body: v04,
			wantStatus: 400},
		{name: "v0.5 sent to v0.4", method: http.MethodPut, path: "/v0.4/traces", contentType: mp, body: v05,
			wantStatus: 400},
		{name: "v0.5 index beyond the table", method: http.MethodPut, path: "/v0.5/traces", contentType: mp,
			body: msgpackOf(t, []any{strs, []any{[]any{badIndex}}}), wantStatus: 400},
		{name: "v0.5 span of 11 fields", method: http.MethodPut, path: "/v0.5/traces", contentType: mp,
			body: msgpackOf(t, []any{strs, []any{[]any{shortSpan}}}), wantStatus: 400},
		{name: "v0.5 trace ID a string", method: http.MethodPut, path: "/v0.5/traces", contentType: mp,
			body: msgpackOf(t, []any{strs, []any{[]any{stringID}}}), wantStatus: 400},
		{name: "v0.5 three parts", method: http.MethodPut, path: "/v0.5/traces", contentType: mp,
			body: msgpackOf(t, []any{strs, []any{}, []any{}}), wantStatus: 400},
		{name: "v0.5 table of integers", method: http.MethodPut, path: "/v0.5/traces", contentType: mp,
			body: msgpackOf(t, []any{[]any{1, 2}, []any{}}), wantStatus: 400},
		{name: "GET traces", method: http.MethodGet, path: "/v0.4/traces", wantStatus: 405},
	}
	runRequestCases(t, tests)
}

func TestDatadogInfoStatsTelemetry(t *testing.T) {
	isInfo := func(t *testing.T, resp response) {
		t.Helper()
		var doc struct {
			Version       string   `json:"version"`
			Endpoints     []string `json:"endpoints"`
			ClientDropP0s bool     `json:"client_drop_p0s"`
		}
		if err := json.Unmarshal(resp.body, &doc); err != nil {
			t.Fatalf("info %q: %v", resp.body, err)
		}
		for _, ep := range []string{"/v0.4/traces", "/v0.5/traces", "/v0.6/stats", "/telemetry/proxy/"} {
			if !slices.Contains(doc.Endpoints, ep) {
				t.Errorf("info endpoints %q lack %s", doc.Endpoints, ep)
			}
			// Every endpoint offered is one the sink serves.
			if route(ep) == unknownPath {
				t.Errorf("info offers %s, which the sink does not serve", ep)
			}
		}
		if slices.Contains(doc.Endpoints, "/v0.7/config") {
			t.Errorf("info offers remote configuration, which the sink does not serve")
		}
		if doc.Version == "" || !doc.ClientDropP0s {
			t.Errorf("info %q: want a version and client_drop_p0s", resp.body)
		}
		// Tracers hash the document themselves and compare with this header.
		h := sha256.Sum256(resp.body)
		if got := resp.header.Get(datadogStateHeader); got != hex.EncodeToString(h[:]) {
			t.Errorf("%s = %q, want the SHA-256 of the body, %x", datadogStateHeader, got, h)
		}
	}
	// A ClientStatsPayload (pkg/proto/datadog/trace/stats.proto) as a
	// tracer encodes it.
	stats := msgpackOf(t, map[string]any{
		"Hostname": "", "Env": "test", "Version": "1.0", "Lang": "java", "TracerVersion": "1.68.1",
		"RuntimeID": "2b8f2432-bdaa-47f7-a69b-6d243f87208d", "Sequence": uint64(1),
		"Stats": []any{map[string]any{
			"Start": uint64(1_700_000_000_000_000_000), "Duration": uint64(10_000_000_000),
			"Stats": []any{map[string]any{
				"Service": "checkout", "Name": "http.request", "Resource": "GET /front", "HTTPStatusCode": uint32(200),
				"Type": "http", "Synthetics": false, "Hits": uint64(20), "TopLevelHits": uint64(20),
				"Errors": uint64(0), "Duration": uint64(25_000_000), "OkSummary": []byte{0x0a}, "ErrorSummary": []byte{},
			}},
		}},
	})
	const mp = "application/msgpack"
	tests := []requestCase{
		{name: "info", method: http.MethodGet, path: "/info",
			wantStatus: 200, wantType: "application/json", check: isInfo},
		{name: "stats", method: http.MethodPut, path: "/v0.6/stats", contentType: mp, body: stats,
			wantStatus: 200},
		{name: "stats POST", path: "/v0.6/stats", contentType: mp, body: stats,
			wantStatus: 200},
		{name: "stats not a map", method: http.MethodPut, path: "/v0.6/stats", contentType: mp,
			body: msgpackOf(t, []any{1}), wantStatus: 400},
		{name: "stats truncated", method: http.MethodPut, path: "/v0.6/stats", contentType: mp,
			body: stats[:len(stats)/2], wantStatus: 400},
		{name: "telemetry", path: "/telemetry/proxy/api/v2/apmtelemetry", contentType: "application/json",
			body: []byte(`{"api_version":"v2","request_type":"app-started","payload":{}}`), wantStatus: 202},
		{name: "remote config not offered", path: "/v0.7/config", contentType: "application/json",
			body: []byte(`{"client":{}}`), wantStatus: 404},
		{name: "POST info", path: "/info", wantStatus: 405},
	}
	runRequestCases(t, tests)
}
