package sink

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // exporters may compress with gzip
)

// OTLP/gRPC is served on the sink's own port: HTTP/2 without TLS, which
// is how gRPC exporters reach an http:// endpoint, so that an exporter of
// either protocol is pointed at ${sink} unchanged. Requests are told apart
// by protocol and Content-Type (application/grpc on HTTP/2) and handed to
// a gRPC server (grpc.Server.ServeHTTP) with the OTLP services registered
// from pdata. The same limits hold: a message is at most
// MaxGRPCMessageBytes, and before gRPC reads it the sink reads it (its
// 5-byte prefix first, so that a message over the limit is never read),
// charges it and what pdata will make of it to the memory budget and takes
// a decode slot, or answers UNAVAILABLE (RESOURCE_EXHAUSTED when it could
// never fit); gRPC then reads it again from memory.

// grpcHeaderLen is the length of a gRPC message's prefix: a compressed
// flag and a 4-byte big-endian length.
const grpcHeaderLen = 5

// isGRPC reports whether r is a gRPC call.
func isGRPC(r *http.Request) bool {
	return r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// newGRPCServer returns a gRPC server of the OTLP services that counts
// into s.
func (s *Sink) newGRPCServer() *grpc.Server {
	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(s.lim.maxGRPC),
		grpc.MaxConcurrentStreams(uint32(s.lim.decodes)),
	)
	ptraceotlp.RegisterGRPCServer(srv, &grpcTraces{s: s})
	pmetricotlp.RegisterGRPCServer(srv, &grpcMetrics{s: s})
	plogotlp.RegisterGRPCServer(srv, &grpcLogs{s: s})
	return srv
}

// rpcTally is what the OTLP services tell serveGRPC of one call.
type rpcTally struct {
	accepted bool
}

// tallyKey is the context key of a call's *rpcTally.
type tallyKey struct{}

// accept notes in ctx's tally that the call was accepted.
func accept(ctx context.Context) {
	if t, ok := ctx.Value(tallyKey{}).(*rpcTally); ok {
		t.accepted = true
	}
}

// grpcTraces is the OTLP trace service.
type grpcTraces struct {
	ptraceotlp.UnimplementedGRPCServer
	s *Sink
}

// Export counts the request's spans.
func (g *grpcTraces) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	g.s.c.spans.Add(uint64(req.Traces().SpanCount()))
	accept(ctx)
	return ptraceotlp.NewExportResponse(), nil
}

// grpcMetrics is the OTLP metrics service.
type grpcMetrics struct {
	pmetricotlp.UnimplementedGRPCServer
	s *Sink
}

// Export counts the request's data points.
func (g *grpcMetrics) Export(ctx context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	g.s.c.metricPoints.Add(uint64(req.Metrics().DataPointCount()))
	accept(ctx)
	return pmetricotlp.NewExportResponse(), nil
}

// grpcLogs is the OTLP logs service.
type grpcLogs struct {
	plogotlp.UnimplementedGRPCServer
	s *Sink
}

// Export counts the request's log records.
func (g *grpcLogs) Export(ctx context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	g.s.c.logRecords.Add(uint64(req.Logs().LogRecordCount()))
	accept(ctx)
	return plogotlp.NewExportResponse(), nil
}

// serveGRPC serves one gRPC call: it charges the message to the budget,
// hands the call to the gRPC server and counts it as accepted or rejected
// with the bytes read of it.
func (s *Sink) serveGRPC(w http.ResponseWriter, r *http.Request) {
	s.c.requests.Add(1)
	l := s.newLease(r.Context())
	defer l.release()
	body := &stallReader{r: r.Body, rc: http.NewResponseController(w), s: s, ctx: r.Context(), start: time.Now()}
	tally := &rpcTally{}
	defer func() {
		if tally.accepted {
			s.c.bytes.Add(uint64(body.n))
			prove(r.Context())
		} else {
			s.c.rejected.Add(1)
			s.c.rejectedBytes.Add(uint64(body.n))
		}
		if s.observe != nil {
			s.observe(r, http.StatusOK)
		}
	}()

	var hdr [grpcHeaderLen]byte
	n, err := io.ReadFull(body, hdr[:])
	prefix := hdr[:n]
	if err == nil {
		var rerr *requestError
		prefix, rerr, err = s.readGRPCMessage(r, body, hdr, l)
		if rerr != nil {
			grpcError(w, grpcCode(rerr.status), rerr.msg)
			return
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF // let gRPC see the body end where it ended
	}
	r.Body = &prefixedBody{prefix: bytes.NewReader(prefix), body: body, err: err}
	s.grpc.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tallyKey{}, tally)))
}

// readGRPCMessage reads the message whose prefix is hdr from body, into
// memory charged to l, and charges what pdata will hold of it; then takes
// a decode slot. It returns what it read, prefix included, for gRPC to
// read again, and the error that ended reading it. A message over the
// limit is left for gRPC to refuse; one compressed other than with gzip
// for gRPC to refuse or decode (within its own limit).
func (s *Sink) readGRPCMessage(r *http.Request, body io.Reader, hdr [grpcHeaderLen]byte, l *lease) ([]byte, *requestError, error) {
	size := int64(binary.BigEndian.Uint32(hdr[1:]))
	if size > int64(s.lim.maxGRPC) {
		return hdr[:], nil, nil
	}
	if rerr := l.grow(grpcHeaderLen + size); rerr != nil {
		return nil, rerr, nil
	}
	buf := make([]byte, grpcHeaderLen+size)
	copy(buf, hdr[:])
	n, err := io.ReadFull(body, buf[grpcHeaderLen:])
	buf = buf[:grpcHeaderLen+n]
	if err != nil {
		return buf, nil, err
	}
	msg := buf[grpcHeaderLen:]
	if hdr[0] != 0 {
		if !strings.EqualFold(r.Header.Get("Grpc-Encoding"), "gzip") {
			return buf, l.decodeSlot(), nil
		}
		var rerr *requestError
		if msg, rerr = s.decompressUpTo(gzipped, msg, l, int64(s.lim.maxGRPC)); rerr != nil {
			return nil, rerr, nil
		}
	}
	cost, perr := pdataCost(protobufEncoding, msg)
	if perr != nil {
		return nil, &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf("decode OTLP request: %v", perr)}, nil
	}
	if rerr := l.grow(cost); rerr != nil {
		return nil, rerr, nil
	}
	return buf, l.decodeSlot(), nil
}

// grpcCode maps the HTTP statuses the sink refuses with to gRPC codes.
func grpcCode(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusRequestEntityTooLarge:
		return codes.ResourceExhausted
	case http.StatusRequestTimeout:
		return codes.DeadlineExceeded
	}
	return codes.Unavailable
}

// grpcError answers a gRPC call with code and msg and no message, as a
// trailers-only response.
func grpcError(w http.ResponseWriter, c codes.Code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", strconv.Itoa(int(c)))
	h.Set("Grpc-Message", url.PathEscape(msg))
	if c == codes.Unavailable {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(http.StatusOK)
}

// stallReader reads a request body, counting its bytes, and gives each
// read until Sink.bodyDeadline to return before the connection's read
// deadline fails it.
type stallReader struct {
	r     io.Reader
	rc    *http.ResponseController
	s     *Sink
	ctx   context.Context // the request's
	start time.Time
	n     int64
}

// Read reads from the body under a fresh deadline (Sink.bodyDeadline).
func (sr *stallReader) Read(p []byte) (int, error) {
	_ = sr.rc.SetReadDeadline(sr.s.bodyDeadline(sr.ctx, sr.start, time.Now(), sr.n))
	n, err := sr.r.Read(p)
	sr.n += int64(n)
	return n, err
}

// prefixedBody is a request body of which the prefix has been read
// already: it reads the prefix again, then the rest, or, when reading the
// prefix failed, that error.
type prefixedBody struct {
	prefix *bytes.Reader
	body   *stallReader
	err    error // reading the prefix's error, if any
}

// Read reads the prefix, then the body.
func (pb *prefixedBody) Read(p []byte) (int, error) {
	if pb.prefix.Len() > 0 {
		return pb.prefix.Read(p)
	}
	if pb.err != nil {
		return 0, pb.err
	}
	return pb.body.Read(p)
}

// Close closes the body.
func (pb *prefixedBody) Close() error {
	if c, ok := pb.body.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
