package sink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc"
)

// Counts is what the sink has received, cumulative since Start.
type Counts struct {
	// Requests is the number of HTTP requests received, on any path and
	// whatever their outcome, including an agent's discovery, configuration
	// and self-telemetry calls.
	Requests uint64
	// Bytes is the number of request body bytes received as sent on the
	// wire, that is before decompression, by requests the sink accepted,
	// on any path (OTLP/gRPC: the messages' bytes as framed on the wire).
	Bytes uint64
	// Spans is the number of spans accepted: OTLP and Zipkin spans, Elastic
	// APM transactions and spans, and Datadog spans. An Elastic transaction
	// is a span in OpenTelemetry terms (a service's entry span), so both
	// count.
	Spans uint64
	// MetricPoints is the number of metric data points accepted: OTLP data
	// points and the samples of Elastic APM metricsets.
	MetricPoints uint64
	// LogRecords is the number of log records accepted: OTLP log records,
	// and Elastic APM errors and log events (an error is an exception record,
	// which OpenTelemetry would carry as a log record or span event).
	LogRecords uint64
	// Profiles is the number of profiles accepted: one per Pyroscope
	// ingest request, however many sample types (CPU, allocations, locks)
	// the profile holds.
	Profiles uint64
	// Rejected is the number of requests answered with an error status
	// (unknown path, wrong method, unsupported encoding, undecodable or
	// oversized payload, a stalled upload, or the sink too busy: 503) or,
	// over gRPC, with a status other than OK. Their spans, points, records
	// and profiles are not counted.
	Rejected uint64
	// RejectedBytes is the number of request body bytes the sink read of
	// the requests it rejected, as sent on the wire: never part of Bytes.
	// A body refused before it was read (a Content-Length over the limit)
	// adds nothing.
	RejectedBytes uint64
}

// counters holds the live counts; every field is updated atomically.
type counters struct {
	requests      atomic.Uint64
	bytes         atomic.Uint64
	spans         atomic.Uint64
	metricPoints  atomic.Uint64
	logRecords    atomic.Uint64
	profiles      atomic.Uint64
	rejected      atomic.Uint64
	rejectedBytes atomic.Uint64
}

// Sink is a telemetry receiver that counts what agents export to it.
// Create it with New, then call Start; it is safe for concurrent use.
type Sink struct {
	// c is where the sink counts: its own memory, or a CountsFile shared
	// with another process (NewCounting).
	c *counters

	// lim bounds what the sink holds and how long it waits (limits.go);
	// a field, so that tests can lower it before Start. mem (bytes) and
	// slots (decodes) are its semaphores, made at Start.
	lim   limits
	mem   *semaphore.Weighted
	slots *semaphore.Weighted

	bufs   sync.Pool // *[]byte, for request bodies
	gzips  sync.Pool // *gzip.Reader
	zlibs  sync.Pool // io.ReadCloser from zlib.NewReader, a zlib.Resetter
	flates sync.Pool // io.ReadCloser from flate.NewReader, a flate.Resetter

	// fresh holds the connections that have not sent a request yet (see
	// connState); closing is set when Close begins.
	fresh   sync.Map // net.Conn → struct{}
	closing atomic.Bool
	// open is the number of connections open (see pressure.go).
	open atomic.Int64

	// observe, when set before Start, is told of every request once it
	// is answered (tests use it to see what an agent called).
	observe func(r *http.Request, status int)

	mu       sync.Mutex // guards the fields below; never taken on the request path
	started  bool
	srv      *http.Server
	grpc     *grpc.Server // OTLP/gRPC, served through srv
	url      string
	done     chan struct{} // closed when Serve has returned
	serveErr error         // Serve's error, valid once done is closed
	resp     responses     // fixed replies, encoded once at Start
}

// New returns a sink that is not yet listening; call Start.
func New() *Sink {
	return &Sink{c: new(counters), lim: defaultLimits()}
}

// NewCounting returns a sink, not yet listening, that counts into f, so
// that the process that mapped f reads the counts as they change.
func NewCounting(f *CountsFile) *Sink {
	return &Sink{c: f.c, lim: defaultLimits()}
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
	if err := s.lim.check(); err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	resp, err := newResponses()
	if err != nil {
		return fmt.Errorf("sink: encode replies: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sink: listen on %q: %w", addr, err)
	}
	// Past this many connections, new ones wait in the kernel's backlog
	// until one closes (a stalled one within the timeouts below).
	ln = netutil.LimitListener(ln, s.lim.conns)
	s.started = true
	s.resp = resp
	s.url = baseURL(ln.Addr())
	s.mem, s.slots = newBudget(s.lim)
	s.grpc = s.newGRPCServer()
	// HTTP/1.1 for OTLP/HTTP and the other protocols, and HTTP/2 without
	// TLS (prior knowledge, as gRPC clients speak it) for OTLP/gRPC, on
	// the same port. A body must keep arriving (StallTimeout, set per read
	// in readBody); the timeouts below drop a client that stalls before
	// it, or idles.
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ConnState:         s.connState,
		ConnContext:       s.connContext,
		Protocols:         protocols,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    64 << 10,
		// HTTP/2 buffers what a client sends ahead of the handler up to
		// its flow-control windows: kept at their least, since every
		// connection and stream has its own; and a connection carries as
		// many requests at once as the sink decodes. 250 connections of 16
		// streams each that sent DATA and never read their replies took
		// the sink to 193 MB with 16 streams and windows of 256 KiB.
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          s.lim.decodes,
			MaxReceiveBufferPerConnection: 64 << 10,
			MaxReceiveBufferPerStream:     64 << 10,
		},
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
func (s *Sink) Counts() Counts { return s.c.counts() }

// counts reads every counter.
func (c *counters) counts() Counts {
	return Counts{
		Requests:      c.requests.Load(),
		Bytes:         c.bytes.Load(),
		Spans:         c.spans.Load(),
		MetricPoints:  c.metricPoints.Load(),
		LogRecords:    c.logRecords.Load(),
		Profiles:      c.profiles.Load(),
		Rejected:      c.rejected.Load(),
		RejectedBytes: c.rejectedBytes.Load(),
	}
}

// connState counts the open connections (the sink's pressure), and
// tracks the connections that have not sent a request yet, so that Close
// can close them at once: http.Server.Shutdown would otherwise wait up to
// 5 s for each, and HTTP clients commonly leave such connections behind
// (a connection dialled for a request that another one served). Deleting
// a key that is absent takes no lock, so this costs requests on a
// kept-alive connection next to nothing.
func (s *Sink) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		s.open.Add(1)
		s.fresh.Store(c, struct{}{})
		if s.closing.Load() {
			_ = c.Close()
		}
	case http.StateActive:
		s.fresh.Delete(c)
	case http.StateClosed, http.StateHijacked:
		s.open.Add(-1)
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
	s.grpc.Stop()
	s.mu.Lock()
	errs = append(errs, s.serveErr)
	s.mu.Unlock()
	return errors.Join(errs...)
}

// serveHTTP counts and reads every request, then routes it. A request
// answered with an error status is counted as rejected, and its body's
// bytes as rejected bytes; the others' bytes as received.
func (s *Sink) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if isGRPC(r) {
		s.serveGRPC(w, r)
		return
	}
	s.c.requests.Add(1)
	rec := &statusRecorder{ResponseWriter: w}
	l := s.newLease(r.Context())
	var read int64
	defer func() {
		l.release()
		status := rec.status
		if status == 0 {
			status = http.StatusOK // nothing written: net/http sends 200
		}
		if status >= 400 {
			s.c.rejected.Add(1)
			s.c.rejectedBytes.Add(uint64(read))
		} else {
			s.c.bytes.Add(uint64(read))
			prove(r.Context())
		}
		if s.observe != nil {
			s.observe(r, status)
		}
	}()
	w = rec

	ep := route(r.URL.Path)
	enc := noEncoding // OTLP errors are answered in the request's encoding, if any
	if _, ok := ep.otlpSignal(); ok {
		enc = otlpEncoding(r.Header.Get("Content-Type"))
	}

	// Read the body whatever the outcome, so that every byte received is
	// counted and the connection stays usable.
	raw, n, rerr := s.readBody(rec.ResponseWriter, r, l)
	read = n
	defer s.putBuffer(raw)
	if rerr != nil {
		s.rejectFor(w, ep, enc, rerr)
		return
	}

	if ep == unknownPath {
		s.reject(w, &requestError{status: http.StatusNotFound, msg: "unknown path " + r.URL.Path}, noEncoding)
		return
	}
	if methods := ep.methods(); !slices.Contains(methods, r.Method) {
		allow := strings.Join(methods, ", ")
		w.Header().Set("Allow", allow)
		s.rejectFor(w, ep, enc, &requestError{status: http.StatusMethodNotAllowed,
			msg: "method " + r.Method + " not allowed, use " + allow})
		return
	}
	if len(raw) > 0 {
		if rerr := l.decodeSlot(); rerr != nil {
			s.rejectFor(w, ep, enc, rerr)
			return
		}
	}
	switch ep {
	case otlpTraces, otlpMetrics, otlpLogs:
		sig, _ := ep.otlpSignal()
		s.serveOTLP(w, r, sig, enc, raw, l)
	case zipkinSpans:
		s.serveZipkin(w, r, raw, l)
	case elasticServerInfo:
		s.serveElasticServerInfo(w)
	case elasticIntake:
		s.serveElasticIntake(w, r, raw, l)
	case elasticAgentConfig:
		s.serveElasticAgentConfig(w, r)
	case datadogInfo:
		s.serveDatadogInfo(w)
	case datadogTracesV04, datadogTracesV05:
		s.serveDatadogTraces(w, r, ep, raw, l)
	case datadogStats:
		s.serveDatadogStats(w, r, raw, l)
	case datadogTelemetry:
		s.serveDatadogTelemetry(w)
	case pyroscopeIngest:
		s.servePyroscope(w, r, raw, l)
	case skywalkingSegment1, skywalkingSegments, skywalkingLogs:
		s.serveSkyWalking(w, r, ep, raw, l)
	case skywalkingManagement:
		s.serveSkyWalkingManagement(w)
	}
}

// endpoint is a path the sink serves, and the protocol spoken there.
type endpoint int

const (
	unknownPath          endpoint = iota
	otlpTraces                    // POST /v1/traces
	otlpMetrics                   // POST /v1/metrics
	otlpLogs                      // POST /v1/logs
	zipkinSpans                   // POST /api/v2/spans
	elasticServerInfo             // GET /: APM Server information
	elasticIntake                 // POST /intake/v2/events
	elasticAgentConfig            // GET or POST /config/v1/agents: central configuration
	datadogInfo                   // GET /info: trace agent discovery
	datadogTracesV04              // PUT or POST /v0.4/traces
	datadogTracesV05              // PUT or POST /v0.5/traces
	datadogStats                  // PUT or POST /v0.6/stats: client-computed span stats
	datadogTelemetry              // POST /telemetry/proxy/...: the tracer's own telemetry
	pyroscopeIngest               // POST /ingest
	skywalkingSegment1            // POST /v3/segment: one SkyWalking segment (JSON)
	skywalkingSegments            // POST /v3/segments: an array of them
	skywalkingLogs                // POST /v3/logs: an array of SkyWalking LogData
	skywalkingManagement          // POST /v3/management/…: instance properties, keep-alive
)

// datadogTelemetryPrefix is the path under which a Datadog trace agent
// relays tracers' own telemetry to Datadog's intake.
const datadogTelemetryPrefix = "/telemetry/proxy/"

// route returns the endpoint served on path, or unknownPath.
func route(path string) endpoint {
	switch path {
	case "/v1/traces":
		return otlpTraces
	case "/v1/metrics":
		return otlpMetrics
	case "/v1/logs":
		return otlpLogs
	case "/api/v2/spans":
		return zipkinSpans
	case "/":
		return elasticServerInfo
	case "/intake/v2/events":
		return elasticIntake
	case "/config/v1/agents":
		return elasticAgentConfig
	case "/info":
		return datadogInfo
	case "/v0.4/traces":
		return datadogTracesV04
	case "/v0.5/traces":
		return datadogTracesV05
	case "/v0.6/stats":
		return datadogStats
	case "/ingest":
		return pyroscopeIngest
	case "/v3/segment":
		return skywalkingSegment1
	case "/v3/segments":
		return skywalkingSegments
	case "/v3/logs":
		return skywalkingLogs
	case "/v3/management/reportProperties", "/v3/management/keepAlive":
		return skywalkingManagement
	}
	if strings.HasPrefix(path, datadogTelemetryPrefix) {
		return datadogTelemetry
	}
	return unknownPath
}

// methods returns the HTTP methods ep accepts, as its protocol's clients
// send them.
func (ep endpoint) methods() []string {
	switch ep {
	case elasticServerInfo, datadogInfo:
		return []string{http.MethodGet, http.MethodHead}
	case elasticAgentConfig:
		return []string{http.MethodGet, http.MethodPost}
	case datadogTracesV04, datadogTracesV05, datadogStats:
		return []string{http.MethodPut, http.MethodPost}
	}
	return []string{http.MethodPost}
}

// otlpSignal returns the OTLP signal received at ep, and false when ep is
// not an OTLP endpoint.
func (ep endpoint) otlpSignal() (signal, bool) {
	switch ep {
	case otlpTraces:
		return traces, true
	case otlpMetrics:
		return metrics, true
	case otlpLogs:
		return logs, true
	}
	return 0, false
}

// statusRecorder remembers the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the status and sends it.
func (rec *statusRecorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

// Unwrap returns the writer rec wraps, for http.ResponseController.
func (rec *statusRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// Write records an implicit 200 and writes b.
func (rec *statusRecorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.ResponseWriter.Write(b)
}

// requestError is a request the sink refuses, with the status to answer.
type requestError struct {
	status int
	msg    string
}

// reject answers a refused request (serveHTTP counts it): with a
// google.rpc.Status in enc when the request's OTLP encoding is known, in
// plain text otherwise.
func (s *Sink) reject(w http.ResponseWriter, rerr *requestError, enc encoding) {
	busyHeaders(w, rerr)
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

// rejectFor rejects a request to ep in the form its protocol's clients
// expect: a google.rpc.Status for OTLP, the APM Server's JSON error for
// Elastic intake, plain text otherwise.
func (s *Sink) rejectFor(w http.ResponseWriter, ep endpoint, enc encoding, rerr *requestError) {
	if ep == elasticIntake {
		s.rejectIntake(w, rerr)
		return
	}
	s.reject(w, rerr, enc)
}
