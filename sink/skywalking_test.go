package sink

import (
	"net/http"
	"strings"
	"testing"
)

// swSegment is a segment as SkyWalking's Python agent posts it to
// /v3/segment (skywalking/client/http.py): a Flask entry span and three
// requests exit spans.
const swSegment = `{"traceId": "8a1b6d2e9f1a11ef", "traceSegmentId": "8a1b6d2e9f1a11f0",
 "service": "flask-consumer", "serviceInstance": "6f5fc828", "isSizeLimited": false,
 "spans": [
  {"spanId": 0, "parentSpanId": -1, "startTime": 1763900000000, "endTime": 1763900000012,
   "operationName": "/consumer", "peer": "", "spanType": "Entry", "spanLayer": "Http",
   "componentId": 7001, "isError": false, "logs": [],
   "tags": [{"key": "http.method", "value": "GET"}, {"key": "http.status_code", "value": "200"}],
   "refs": []},
  {"spanId": 1, "parentSpanId": 0, "startTime": 1763900000003, "endTime": 1763900000005,
   "operationName": "/provider", "peer": "127.0.0.1:40001", "spanType": "Exit", "spanLayer": "Http",
   "componentId": 7002, "isError": false, "logs": [], "tags": [], "refs": []},
  {"spanId": 2, "parentSpanId": 0, "startTime": 1763900000005, "endTime": 1763900000007,
   "operationName": "/provider", "peer": "127.0.0.1:40001", "spanType": "Exit", "spanLayer": "Http",
   "componentId": 7002, "isError": false, "logs": [], "tags": [], "refs": []},
  {"spanId": 3, "parentSpanId": 0, "startTime": 1763900000007, "endTime": 1763900000009,
   "operationName": "/provider", "peer": "127.0.0.1:40001", "spanType": "Exit", "spanLayer": "Http",
   "componentId": 7002, "isError": false, "logs": [], "tags": [], "refs": []}]}`

func TestSkyWalking(t *testing.T) {
	tests := []struct {
		name, path, contentType, body string
		status                        int
		spans, logs, rejected         uint64
	}{
		{"one segment", "/v3/segment", "application/json", swSegment, http.StatusOK, 4, 0, 0},
		{"segments", "/v3/segments", "application/json", "[" + swSegment + "," + swSegment + "]", http.StatusOK, 8, 0, 0},
		{"no content type", "/v3/segment", "", swSegment, http.StatusOK, 4, 0, 0},
		{"logs", "/v3/logs", "application/json", `[{"service": "a", "body": {"text": {"text": "x"}}}, {"service": "a"}]`, http.StatusOK, 0, 2, 0},
		{"properties", "/v3/management/reportProperties", "application/json", `{"service": "a", "serviceInstance": "b", "properties": []}`, http.StatusOK, 0, 0, 0},
		{"keep-alive", "/v3/management/keepAlive", "application/json", `{"service": "a", "serviceInstance": "b"}`, http.StatusOK, 0, 0, 0},
		{"an array where one segment is due", "/v3/segment", "application/json", "[" + swSegment + "]", http.StatusBadRequest, 0, 0, 1},
		{"not JSON", "/v3/segments", "application/json", `[{"spans": [`, http.StatusBadRequest, 0, 0, 1},
		{"spans not an array", "/v3/segment", "application/json", `{"spans": 4}`, http.StatusBadRequest, 0, 0, 1},
		{"protobuf", "/v3/segment", "application/x-protobuf", "\x0a\x02ab", http.StatusUnsupportedMediaType, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startSink(t)
			got := send(t, http.MethodPost, s.URL()+tt.path, tt.contentType, "", []byte(tt.body))
			if got.status != tt.status {
				t.Fatalf("status %d, want %d: %s", got.status, tt.status, got.body)
			}
			if tt.status == http.StatusOK && strings.TrimSpace(string(got.body)) != "{}" {
				t.Errorf("answer %q, want {} (no commands), as the OAP answers", got.body)
			}
			c := s.Counts()
			if c.Spans != tt.spans || c.LogRecords != tt.logs || c.Rejected != tt.rejected {
				t.Errorf("spans %d, logs %d, rejected %d; want %d, %d, %d", c.Spans, c.LogRecords, c.Rejected, tt.spans, tt.logs, tt.rejected)
			}
		})
	}
}
