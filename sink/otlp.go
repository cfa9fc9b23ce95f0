package sink

import (
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// signal is the kind of telemetry an OTLP endpoint receives.
type signal int

const (
	traces  signal = iota // OTLP /v1/traces
	metrics               // OTLP /v1/metrics
	logs                  // OTLP /v1/logs

	numOTLPSignals // the number of OTLP signals
)

// String returns the signal's name as used in messages.
func (sig signal) String() string {
	switch sig {
	case traces:
		return "traces"
	case metrics:
		return "metrics"
	case logs:
		return "logs"
	}
	return fmt.Sprintf("signal(%d)", int(sig))
}

// encoding is the wire encoding of an OTLP request and its response.
type encoding int

const (
	noEncoding encoding = iota // unknown: answer in plain text
	protobufEncoding
	jsonEncoding
)

// contentType returns the media type of e.
func (e encoding) contentType() string {
	switch e {
	case protobufEncoding:
		return "application/x-protobuf"
	case jsonEncoding:
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// otlpEncoding returns the encoding named by a Content-Type header value,
// or noEncoding when it is neither OTLP protobuf nor OTLP JSON. Parameters
// such as "; charset=utf-8" are ignored.
func otlpEncoding(contentType string) encoding {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	switch {
	case strings.EqualFold(mt, "application/x-protobuf"):
		return protobufEncoding
	case strings.EqualFold(mt, "application/json"):
		return jsonEncoding
	}
	return noEncoding
}

// status encodes a google.rpc.Status for an HTTP error status, as the OTLP
// specification asks of a server that rejects a request.
func (e encoding) status(httpStatus int, msg string) ([]byte, error) {
	st := &status.Status{Code: int32(rpcCode(httpStatus)), Message: msg}
	var (
		b   []byte
		err error
	)
	switch e {
	case protobufEncoding:
		b, err = proto.Marshal(st)
	case jsonEncoding:
		b, err = protojson.Marshal(st)
	default:
		return nil, fmt.Errorf("encode status: no OTLP encoding")
	}
	if err != nil {
		return nil, fmt.Errorf("encode status as %s: %w", e.contentType(), err)
	}
	return b, nil
}

// rpcCode maps the HTTP statuses the sink answers with to gRPC codes.
func rpcCode(httpStatus int) code.Code {
	switch httpStatus {
	case http.StatusBadRequest:
		return code.Code_INVALID_ARGUMENT
	case http.StatusRequestEntityTooLarge:
		return code.Code_RESOURCE_EXHAUSTED
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType:
		return code.Code_UNIMPLEMENTED
	case http.StatusServiceUnavailable:
		return code.Code_UNAVAILABLE
	case http.StatusRequestTimeout:
		return code.Code_DEADLINE_EXCEEDED
	}
	return code.Code_UNKNOWN
}

// responses holds the sink's fixed replies, encoded once at Start: the
// empty ExportResponse of each OTLP signal in each encoding, and the
// discovery documents of the Elastic and Datadog protocols.
type responses struct {
	proto [numOTLPSignals][]byte
	json  [numOTLPSignals][]byte

	elasticInfo  []byte // APM Server information, GET /
	datadogInfo  []byte // trace agent discovery, GET /info
	datadogState string // Datadog-Agent-State: the SHA-256 of datadogInfo, in hex
}

// newResponses encodes the sink's fixed replies.
func newResponses() (responses, error) {
	type marshaler interface {
		MarshalProto() ([]byte, error)
		MarshalJSON() ([]byte, error)
	}
	var r responses
	for sig, m := range [numOTLPSignals]marshaler{
		traces:  ptraceotlp.NewExportResponse(),
		metrics: pmetricotlp.NewExportResponse(),
		logs:    plogotlp.NewExportResponse(),
	} {
		var err error
		if r.proto[sig], err = m.MarshalProto(); err != nil {
			return r, fmt.Errorf("%s response as protobuf: %w", signal(sig), err)
		}
		if r.json[sig], err = m.MarshalJSON(); err != nil {
			return r, fmt.Errorf("%s response as JSON: %w", signal(sig), err)
		}
	}
	var err error
	if r.elasticInfo, err = elasticServerInfoBody(); err != nil {
		return r, err
	}
	if r.datadogInfo, r.datadogState, err = datadogInfoBody(); err != nil {
		return r, err
	}
	return r, nil
}

// serveOTLP handles a POST to an OTLP/HTTP endpoint whose body, as sent,
// is raw and whose Content-Type named enc, with memory charged to l: it decodes the payload with
// pdata, counts its items and answers with an empty ExportResponse in enc.
func (s *Sink) serveOTLP(w http.ResponseWriter, r *http.Request, sig signal, enc encoding, raw []byte, l *lease) {
	if enc == noEncoding {
		s.reject(w, &requestError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("unsupported Content-Type %q (use application/x-protobuf or application/json)",
				r.Header.Get("Content-Type"))}, noEncoding)
		return
	}
	body, rerr := s.decodeBody(r, raw, l)
	if rerr != nil {
		s.reject(w, rerr, enc)
		return
	}
	// pdata holds many times the payload's bytes once decoded: charge
	// what it will hold before it does (pdatasize.go).
	cost, err := pdataCost(enc, body)
	if err != nil {
		s.reject(w, &requestError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("decode OTLP %s request (%s): %v", sig, enc.contentType(), err)}, enc)
		return
	}
	if rerr := l.grow(cost); rerr != nil {
		s.reject(w, rerr, enc)
		return
	}
	n, err := decodeOTLP(sig, enc, body)
	if err != nil {
		s.reject(w, &requestError{status: http.StatusBadRequest,
			msg: fmt.Sprintf("decode OTLP %s request (%s): %v", sig, enc.contentType(), err)}, enc)
		return
	}
	switch sig {
	case traces:
		s.c.spans.Add(n)
	case metrics:
		s.c.metricPoints.Add(n)
	case logs:
		s.c.logRecords.Add(n)
	}

	resp := s.resp.proto[sig]
	if enc == jsonEncoding {
		resp = s.resp.json[sig]
	}
	w.Header().Set("Content-Type", enc.contentType())
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(resp)
}

// decodeOTLP decodes an OTLP export request of the given signal with
// pdata and returns how many spans, data points or log records it holds.
func decodeOTLP(sig signal, enc encoding, body []byte) (uint64, error) {
	type unmarshaler interface {
		UnmarshalProto([]byte) error
		UnmarshalJSON([]byte) error
	}
	var (
		req   unmarshaler
		count func() int
	)
	switch sig {
	case traces:
		tr := ptraceotlp.NewExportRequest()
		req, count = tr, func() int { return tr.Traces().SpanCount() }
	case metrics:
		mr := pmetricotlp.NewExportRequest()
		req, count = mr, func() int { return mr.Metrics().DataPointCount() }
	case logs:
		lr := plogotlp.NewExportRequest()
		req, count = lr, func() int { return lr.Logs().LogRecordCount() }
	default:
		return 0, fmt.Errorf("%s is not an OTLP signal", sig)
	}
	var err error
	if enc == jsonEncoding {
		err = req.UnmarshalJSON(body)
	} else {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		return 0, err
	}
	return uint64(count()), nil
}
