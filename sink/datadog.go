package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tinylib/msgp/msgp"
)

// datadogAgentVersion is the Datadog trace agent version the sink
// announces in its discovery document.
const datadogAgentVersion = "7.68.0"

// datadogRates is the reply to a trace payload: the sampling rate per
// service and environment that the agent hands back to tracers. Rate 1 for
// the default key keeps every trace, as an agent does before it has seen
// enough traffic to lower it.
const datadogRates = `{"rate_by_service":{"service:,env:":1}}`

// datadogStateHeader carries the hash of the agent's discovery document on
// trace replies; a tracer that sees it change discovers the agent again.
const datadogStateHeader = "Datadog-Agent-State"

// datadogSpanFields is the number of elements of a v0.5 span array.
const datadogSpanFields = 12

// datadogInfoBody encodes the trace agent discovery document the sink
// answers GET /info with, and returns it with its Datadog-Agent-State: its
// SHA-256 in hex, which is what the agent sends and what tracers compute.
//
// The document offers what the sink serves: traces v0.4 and v0.5,
// client-computed stats (so that, as with a real agent, tracers compute
// span stats and may drop unsampled traces before sending) and the
// telemetry proxy. It offers no remote configuration (/v0.7/config), so
// tracers do not poll for it.
func datadogInfoBody() ([]byte, string, error) {
	b, err := json.Marshal(struct {
		Version          string   `json:"version"`
		Endpoints        []string `json:"endpoints"`
		ClientDropP0s    bool     `json:"client_drop_p0s"`
		SpanMetaStructs  bool     `json:"span_meta_structs"`
		LongRunningSpans bool     `json:"long_running_spans"`
		SpanEvents       bool     `json:"span_events"`
	}{
		Version:          datadogAgentVersion,
		Endpoints:        []string{"/v0.4/traces", "/v0.5/traces", "/v0.6/stats", datadogTelemetryPrefix},
		ClientDropP0s:    true,
		SpanMetaStructs:  true,
		LongRunningSpans: true,
		SpanEvents:       true,
	})
	if err != nil {
		return nil, "", fmt.Errorf("encode Datadog agent information: %w", err)
	}
	h := sha256.Sum256(b)
	return b, hex.EncodeToString(h[:]), nil
}

// serveDatadogInfo answers a tracer's agent discovery request.
func (s *Sink) serveDatadogInfo(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(datadogStateHeader, s.resp.datadogState)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.resp.datadogInfo)
}

// serveDatadogTraces handles a PUT (or POST) of a Datadog trace payload,
// msgpack-encoded, to /v0.4/traces or /v0.5/traces. It counts the spans and
// answers 200 with sampling rates, as the trace agent does. The payload is
// walked, not decoded into spans: v0.4 must be an array of traces, each an
// array of span maps with string keys; v0.5 an array of a string table and
// such traces, each span an array of 12 fields whose strings are valid
// table indices. Anything else, or bytes after the payload, is rejected.
func (s *Sink) serveDatadogTraces(w http.ResponseWriter, r *http.Request, ep endpoint, raw []byte, l *lease) {
	if rerr := checkMsgpack(r); rerr != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	body, rerr := s.decodeBody(r, raw, l)
	if rerr != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	var (
		n   uint64
		err error
	)
	version := "v0.4"
	if ep == datadogTracesV05 {
		version = "v0.5"
		n, err = countSpansV05(body)
	} else {
		n, err = countSpansV04(body)
	}
	if err != nil {
		s.reject(w, &requestError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("decode Datadog %s traces: %v", version, err)}, noEncoding)
		return
	}
	s.c.spans.Add(n)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set(datadogStateHeader, s.resp.datadogState)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(datadogRates))
}

// serveDatadogStats handles the span stats a tracer computed itself
// (ClientStatsPayload, a msgpack map). They summarise spans the tracer also
// sends, or dropped as unsampled, so nothing is counted but the request and
// its bytes; the payload must be a well-formed msgpack map.
func (s *Sink) serveDatadogStats(w http.ResponseWriter, r *http.Request, raw []byte, l *lease) {
	if rerr := checkMsgpack(r); rerr != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	body, rerr := s.decodeBody(r, raw, l)
	if rerr != nil {
		s.reject(w, rerr, noEncoding)
		return
	}
	if err := checkStats(body); err != nil {
		s.reject(w, &requestError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("decode Datadog v0.6 stats: %v", err)}, noEncoding)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// serveDatadogTelemetry accepts a tracer's own telemetry (its
// configuration, integrations and health, which a trace agent relays to
// Datadog) with 202, as Datadog's intake answers. It is not the
// application's telemetry, so nothing is counted but the request and its
// bytes, and the body is not inspected.
func (s *Sink) serveDatadogTelemetry(w http.ResponseWriter) {
	w.WriteHeader(http.StatusAccepted)
}

// checkMsgpack refuses a request whose Content-Type is not msgpack.
func checkMsgpack(r *http.Request) *requestError {
	ct := r.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	if !strings.EqualFold(strings.TrimSpace(mt), "application/msgpack") {
		return &requestError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("unsupported Content-Type %q (use application/msgpack)", ct)}
	}
	return nil
}

// countSpansV04 walks a v0.4 payload, an array of traces each an array of
// spans, and returns the number of spans. A nil span is skipped and not
// counted, as the agent does.
func countSpansV04(b []byte) (uint64, error) {
	traces, b, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return 0, fmt.Errorf("payload: %w", err)
	}
	var n uint64
	for i := range traces {
		spans, rest, err := msgp.ReadArrayHeaderBytes(b)
		if err != nil {
			return 0, fmt.Errorf("trace %d: %w", i, err)
		}
		b = rest
		for j := range spans {
			if msgp.IsNil(b) {
				b = b[1:]
				continue
			}
			if b, err = skipSpanMap(b); err != nil {
				return 0, fmt.Errorf("trace %d, span %d: %w", i, j, err)
			}
			n++
		}
	}
	if len(b) > 0 {
		return 0, fmt.Errorf("%d bytes after the payload", len(b))
	}
	return n, nil
}

// skipSpanMap skips a v0.4 span: a map with string keys.
func skipSpanMap(b []byte) ([]byte, error) {
	fields, b, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return b, err
	}
	for range fields {
		var key []byte
		if key, b, err = msgp.ReadMapKeyZC(b); err != nil {
			return b, fmt.Errorf("field name: %w", err)
		}
		if b, err = msgp.Skip(b); err != nil {
			return b, fmt.Errorf("field %q: %w", key, err)
		}
	}
	return b, nil
}

// countSpansV05 walks a v0.5 payload, [string table, traces], and returns
// the number of spans.
func countSpansV05(b []byte) (uint64, error) {
	parts, b, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return 0, fmt.Errorf("payload: %w", err)
	}
	if parts != 2 {
		return 0, fmt.Errorf("payload is an array of %d, want 2 (string table, traces)", parts)
	}
	strs, b, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return 0, fmt.Errorf("string table: %w", err)
	}
	for i := range strs {
		if _, b, err = msgp.ReadStringZC(b); err != nil {
			return 0, fmt.Errorf("string table entry %d: %w", i, err)
		}
	}
	traces, b, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return 0, fmt.Errorf("traces: %w", err)
	}
	var n uint64
	for i := range traces {
		spans, rest, err := msgp.ReadArrayHeaderBytes(b)
		if err != nil {
			return 0, fmt.Errorf("trace %d: %w", i, err)
		}
		b = rest
		for j := range spans {
			if b, err = skipSpanV05(b, strs); err != nil {
				return 0, fmt.Errorf("trace %d, span %d: %w", i, j, err)
			}
			n++
		}
	}
	if len(b) > 0 {
		return 0, fmt.Errorf("%d bytes after the payload", len(b))
	}
	return n, nil
}

// skipSpanV05 skips a v0.5 span: an array of service, name, resource,
// trace ID, span ID, parent ID, start, duration, error, meta, metrics and
// type, whose strings are indices into a string table of strs entries.
func skipSpanV05(b []byte, strs uint32) ([]byte, error) {
	fields, b, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return b, err
	}
	if fields != datadogSpanFields {
		return b, fmt.Errorf("span has %d fields, want %d", fields, datadogSpanFields)
	}
	index := func(b []byte, what string) ([]byte, error) {
		i, b, err := msgp.ReadUint32Bytes(b)
		if err != nil {
			return b, fmt.Errorf("%s: %w", what, err)
		}
		if i >= strs {
			return b, fmt.Errorf("%s: string index %d beyond the table's %d entries", what, i, strs)
		}
		return b, nil
	}
	for _, what := range [...]string{"service", "name", "resource"} {
		if b, err = index(b, what); err != nil {
			return b, err
		}
	}
	for _, what := range [...]string{"trace ID", "span ID", "parent ID", "start", "duration", "error"} {
		if b, err = skipNumber(b, false); err != nil {
			return b, fmt.Errorf("%s: %w", what, err)
		}
	}
	meta, b, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return b, fmt.Errorf("meta: %w", err)
	}
	for range meta {
		if b, err = index(b, "meta key"); err != nil {
			return b, err
		}
		if b, err = index(b, "meta value"); err != nil {
			return b, err
		}
	}
	metrics, b, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return b, fmt.Errorf("metrics: %w", err)
	}
	for range metrics {
		if b, err = index(b, "metrics key"); err != nil {
			return b, err
		}
		if b, err = skipNumber(b, true); err != nil {
			return b, fmt.Errorf("metrics value: %w", err)
		}
	}
	return index(b, "type")
}

// skipNumber skips an integer, or a float when floats is set.
func skipNumber(b []byte, floats bool) ([]byte, error) {
	switch t := msgp.NextType(b); {
	case t == msgp.IntType, t == msgp.UintType:
	case floats && (t == msgp.Float64Type || t == msgp.Float32Type):
	case t == msgp.InvalidType && len(b) == 0:
		return b, msgp.ErrShortBytes
	default:
		return b, fmt.Errorf("%s where a number belongs", t)
	}
	return msgp.Skip(b)
}

// checkStats checks that b is one msgpack map and nothing more.
func checkStats(b []byte) error {
	if msgp.NextType(b) != msgp.MapType {
		return errors.New("payload is not a map")
	}
	rest, err := msgp.Skip(b)
	if err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	if len(rest) > 0 {
		return fmt.Errorf("%d bytes after the payload", len(rest))
	}
	return nil
}
