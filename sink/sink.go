package sink

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxBodyBytes is the largest request body the sink accepts, as sent on the
// wire (before decompression). Larger requests are answered 413.
const MaxBodyBytes = 64 << 20

// MaxDecodedBytes is the largest request body the sink accepts once
// decompressed, so that a small gzip bomb cannot exhaust memory. Larger
// requests are answered 413.
const MaxDecodedBytes = 64 << 20

// maxPooledBuffer is the capacity above which a body buffer is dropped
// rather than returned to the pool, so that one huge request does not pin
// its memory for the rest of the run.
const maxPooledBuffer = 8 << 20

// Counts is what the sink has received, cumulative since Start.
type Counts struct {
	// Requests is the number of HTTP requests received, on any path and
	// whatever their outcome.
	Requests uint64
	// Bytes is the number of request body bytes received as sent on the
	// wire, that is before gunzip.
	Bytes uint64
	// Spans is the number of spans accepted, OTLP and Zipkin together.
	Spans uint64
	// MetricPoints is the number of OTLP metric data points accepted.
	MetricPoints uint64
	// LogRecords is the number of OTLP log records accepted.
	LogRecords uint64
	// Rejected is the number of requests answered with an error status
	// (unknown path, wrong method, unsupported encoding, undecodable or
	// oversized payload). Their spans, points and records are not counted.
	Rejected uint64
}

// counters holds the live counts; every field is updated atomically.
type counters struct {
	requests     atomic.Uint64
	bytes        atomic.Uint64
	spans        atomic.Uint64
	metricPoints atomic.Uint64
	logRecords   atomic.Uint64
	rejected     atomic.Uint64
}

// Sink is a telemetry receiver that counts what agents export to it.
// Create it with New, then call Start; it is safe for concurrent use.
type Sink struct {
	c counters

	// Body limits, MaxBodyBytes and MaxDecodedBytes; fields so that tests
	// can lower them before Start.
	maxBody, maxDecoded int64

	bufs  sync.Pool // *bytes.Buffer, for request bodies
	gzips sync.Pool // *gzip.Reader

	// fresh holds the connections that have not sent a request yet (see
	// connState); closing is set when Close begins.
	fresh   sync.Map // net.Conn → struct{}
	closing atomic.Bool

	mu       sync.Mutex // guards the fields below; never taken on the request path
	started  bool
	srv      *http.Server
	url      string
	done     chan struct{} // closed when Serve has returned
	serveErr error         // Serve's error, valid once done is closed
	resp     responses     // empty ExportResponses, encoded once at Start
}

// New returns a sink that is not yet listening; call Start.
func New() *Sink {
	return &Sink{maxBody: MaxBodyBytes, maxDecoded: MaxDecodedBytes}
}

// Start listens on addr (for example "127.0.0.1:0" for a free loopback
// port) and serves in the background until Close. A sink can be started
// only once.
func (s *Sink) Start(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("sink: already started")
	}
	resp, err := newResponses()
	if err != nil {
		return fmt.Errorf("sink: encode export responses: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sink: listen on %q: %w", addr, err)
	}
	s.started = true
	s.resp = resp
	s.url = baseURL(ln.Addr())
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ConnState:         s.connState,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
	}
	s.done = make(chan struct{})
	go func(srv *http.Server, done chan struct{}) {
		err := srv.Serve(ln)
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.mu.Lock()
			s.serveErr = fmt.Errorf("sink: serve: %w", err)
			s.mu.Unlock()
		}
		close(done)
	}(s.srv, s.done)
	return nil
}

// baseURL returns the http URL clients should use to reach a listener on
// addr. An unspecified host (0.0.0.0 or ::) is replaced by the matching
// loopback address, since clients cannot connect to it as such.
func baseURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String()
	}
	ip := tcp.IP
	switch {
	case ip == nil || ip.IsUnspecified() && ip.To4() != nil:
		ip = net.IPv4(127, 0, 0, 1)
	case ip.IsUnspecified():
		ip = net.IPv6loopback
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(tcp.Port))
}

// URL returns the sink's base URL without a trailing slash, for example
// "http://127.0.0.1:41234", suitable as OTEL_EXPORTER_OTLP_ENDPOINT. It is
// empty before Start.
func (s *Sink) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Counts returns what the sink has received since Start. It is safe for
// concurrent use and cheap: a handful of atomic loads. The fields are read
// one by one, so a snapshot taken while requests are in flight may be
// mid-request (Requests already counted, its spans not yet).
func (s *Sink) Counts() Counts {
	return Counts{
		Requests:     s.c.requests.Load(),
		Bytes:        s.c.bytes.Load(),
		Spans:        s.c.spans.Load(),
		MetricPoints: s.c.metricPoints.Load(),
		LogRecords:   s.c.logRecords.Load(),
		Rejected:     s.c.rejected.Load(),
	}
}

// connState tracks the connections that have not sent a request yet, so
// that Close can close them at once: http.Server.Shutdown would otherwise
// wait up to 5 s for each, and HTTP clients commonly leave such connections
// behind (a connection dialled for a request that another one served).
// Deleting a key that is absent takes no lock, so this costs requests on a
// kept-alive connection next to nothing.
func (s *Sink) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		s.fresh.Store(c, struct{}{})
		if s.closing.Load() {
			_ = c.Close()
		}
	case http.StateActive, http.StateClosed, http.StateHijacked:
		s.fresh.Delete(c)
	}
}

// Close stops the listener and waits for in-flight requests to finish, or
// until ctx is done, at which point remaining connections are closed
// forcibly and ctx's error is returned. Idle connections, and connections
// that have not sent a request yet, are closed at once. Counts stay
// readable after Close. Closing a sink that was never started, or closing
// it twice, is harmless.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	srv, done := s.srv, s.done
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	// A connection that reaches StateNew from now on is closed by
	// connState; those that reached it before are in fresh.
	s.closing.Store(true)
	s.fresh.Range(func(c, _ any) bool {
		_ = c.(net.Conn).Close()
		return true
	})
	var errs []error
	if err := srv.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("sink: shut down: %w", err))
		if err := srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sink: close: %w", err))
		}
	}
	<-done
	s.mu.Lock()
	errs = append(errs, s.serveErr)
	s.mu.Unlock()
	return errors.Join(errs...)
}

// serveHTTP counts and reads every request, then routes it.
func (s *Sink) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.c.requests.Add(1)

	sig, known := route(r.URL.Path)
	enc := noEncoding // errors are answered in the request's OTLP encoding, if any
	if known && sig != zipkinSpans {
		enc = otlpEncoding(r.Header.Get("Content-Type"))
	}

	// Read the body whatever the outcome, so that Bytes counts every byte
	// received and the connection stays usable.
	raw := s.getBuffer(r.ContentLength)
	defer s.putBuffer(raw)
	if rerr := s.readBody(w, r, raw); rerr != nil {
		s.reject(w, rerr, enc)
		return
	}

	switch {
	case !known:
		s.reject(w, &requestError{status: http.StatusNotFound, msg: "unknown path " + r.URL.Path}, noEncoding)
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		s.reject(w, &requestError{status: http.StatusMethodNotAllowed,
			msg: "method " + r.Method + " not allowed, use POST"}, enc)
	case sig == zipkinSpans:
		s.serveZipkin(w, r, raw.Bytes())
	default:
		s.serveOTLP(w, r, sig, enc, raw.Bytes())
	}
}

// route returns the signal received on path, and false for an unknown path.
func route(path string) (signal, bool) {
	switch path {
	case "/v1/traces":
		return traces, true
	case "/v1/metrics":
		return metrics, true
	case "/v1/logs":
		return logs, true
	case "/api/v2/spans":
		return zipkinSpans, true
	}
	return 0, false
}

// requestError is a request the sink refuses, with the status to answer.
type requestError struct {
	status int
	msg    string
}

// reject counts a refused request and answers it: with a google.rpc.Status
// in enc when the request's OTLP encoding is known, in plain text otherwise.
func (s *Sink) reject(w http.ResponseWriter, rerr *requestError, enc encoding) {
	s.c.rejected.Add(1)
	// Decoder errors may quote the payload; a Status message must be UTF-8.
	msg := strings.ToValidUTF8(rerr.msg, "\uFFFD")
	if enc != noEncoding {
		if body, err := enc.status(rerr.status, msg); err == nil {
			w.Header().Set("Content-Type", enc.contentType())
			w.WriteHeader(rerr.status)
			_, _ = w.Write(body)
			return
		}
	}
	http.Error(w, msg, rerr.status)
}

// readBody reads r's body as sent, up to MaxBodyBytes, into buf and counts
// the bytes read.
func (s *Sink) readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer) *requestError {
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.maxBody))
	s.c.bytes.Add(uint64(buf.Len()))
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &requestError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("request body exceeds %d bytes", s.maxBody)}
	}
	return &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf("read request body: %v", err)}
}

// decodeBody returns raw decompressed according to r's Content-Encoding,
// using scratch for the decompressed bytes when needed.
func (s *Sink) decodeBody(r *http.Request, raw []byte, scratch *bytes.Buffer) ([]byte, *requestError) {
	ce := r.Header.Get("Content-Encoding")
	switch strings.ToLower(strings.TrimSpace(ce)) {
	case "", "identity":
		return raw, nil
	case "gzip", "x-gzip":
		zr, _ := s.gzips.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(bytes.NewReader(raw))
		} else {
			err = zr.Reset(bytes.NewReader(raw))
		}
		if err != nil {
			return nil, &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf("gunzip request body: %v", err)}
		}
		defer s.gzips.Put(zr)
		n, err := scratch.ReadFrom(io.LimitReader(zr, s.maxDecoded+1))
		if err != nil {
			return nil, &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf("gunzip request body: %v", err)}
		}
		if n > s.maxDecoded {
			return nil, &requestError{status: http.StatusRequestEntityTooLarge,
				msg: fmt.Sprintf("decompressed request body exceeds %d bytes", s.maxDecoded)}
		}
		return scratch.Bytes(), nil
	default:
		return nil, &requestError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("unsupported Content-Encoding %q (use gzip or none)", ce)}
	}
}

// getBuffer returns an empty buffer from the pool, grown to hint bytes
// (the request's Content-Length) when known. The hint is capped, so that a
// client announcing a huge body it never sends costs little.
func (s *Sink) getBuffer(hint int64) *bytes.Buffer {
	buf, _ := s.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	if hint > 0 {
		buf.Grow(int(min(hint, s.maxBody, maxPooledBuffer)) + bytes.MinRead)
	}
	return buf
}

// putBuffer returns buf to the pool unless it has grown too large to keep.
func (s *Sink) putBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBuffer {
		return
	}
	buf.Reset()
	s.bufs.Put(buf)
}
