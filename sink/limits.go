package sink

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"
)

// The sink runs inside toll's own process, on the CPU that also runs the
// load generator, so what it holds is both a risk to the run and noise in
// it. Its limits are set for the agents toll measures, not for a gateway:
// an agent exports batches (the OpenTelemetry SDKs' batch processors send
// at most 512 spans, typically 0.1–0.5 MiB; Elastic's agents cut a request
// at api_request_size, 768 KiB; a Pyroscope upload is one profile of a few
// seconds), and gRPC's default receive limit of 4 MiB, which the
// Collector's OTLP/gRPC receiver keeps, is what exporters are built to stay
// under. The Collector's confighttp accepts 20 MiB (max_request_body_size)
// on the wire and as decompressed, sized for a gateway that receives the
// batches of many; one agent needs a fraction of that, so the sink accepts
// 4 MiB as sent and 8 MiB once decompressed.
const (
	// MaxBodyBytes is the largest request body the sink accepts, as sent on
	// the wire (before decompression). Larger requests are answered 413; a
	// request that announces a larger Content-Length is answered before its
	// body is read.
	MaxBodyBytes = 4 << 20

	// MaxDecodedBytes is the largest request body the sink accepts once
	// decompressed, so that a small gzip bomb cannot exhaust memory. The
	// decompressed size is counted before anything is kept (decompressing
	// into nothing), so a bomb is refused having cost only its wire bytes.
	// Larger requests are answered 413.
	MaxDecodedBytes = 8 << 20

	// MaxRatio is the most a request body may grow when decompressed,
	// checked from RatioFrom decoded bytes on. Telemetry carries random
	// trace and span IDs and timestamps, so its batches compress about
	// 5 to 30 times; a body of zeros, the usual bomb, about 1,000 times
	// (DEFLATE's limit). Refused at this ratio, a bomb costs the sink
	// RatioFrom of inflating, not MaxDecodedBytes.
	MaxRatio = 256

	// RatioFrom is how many bytes a body decompresses to before MaxRatio
	// applies: a small body (a few spans, an agent's metadata) may
	// compress further than a batch.
	RatioFrom = 1 << 20

	// MaxGRPCMessageBytes is the largest OTLP/gRPC message the sink
	// accepts, gRPC's default and the Collector's: larger ones get
	// RESOURCE_EXHAUSTED.
	MaxGRPCMessageBytes = 4 << 20

	// MemoryBudget bounds the bytes that the requests in flight may hold
	// at once: bodies as read, decompressed bodies, and what pdata will
	// hold of OTLP payloads, estimated before it decodes them
	// (pdatasize.go). A request that would take more waits for up to
	// DecodeWait and is then answered 503 with Retry-After; one that needs
	// more than the whole budget is answered 413. Go's collector lets the
	// heap grow to about twice what is live, so the sink's share of toll's
	// heap stays under about twice this. It holds a body of each limit and
	// its pdata's bytes (MaxBodyBytes + MaxDecodedBytes·(1+pdataPerByte),
	// 28 MiB) with room for the per-message part of typical payloads: an
	// SDK's batch of 512 spans is charged a few MiB.
	//
	// toll does not set a memory limit on its own process
	// (debug.SetMemoryLimit) as well: this budget already bounds the sink,
	// and a limit would make the collector run harder, on the CPU shared
	// with the load generator, whenever toll's heap neared it, which is a
	// perturbation of the measurement; GOMEMLIMIT sets one for a user who
	// wants it.
	MemoryBudget = 48 << 20

	// ProcessMemoryLimit is the soft memory limit (debug.SetMemoryLimit)
	// of a sink in a process of its own (toll _sink), unless GOMEMLIMIT
	// sets one. Go's collector otherwise lets the heap grow to twice what
	// is live: with MemoryBudget held by requests under attack, and the
	// buffers of MaxConns connections, a standalone sink peaked at
	// 94–122 MB. The collector works harder only near the limit (at most
	// half the process's CPU time, Go's cap, when requests hold the whole
	// budget), and in that process it runs at idle priority, off the load
	// generator's time; toll's own process keeps no limit (see
	// MemoryBudget).
	ProcessMemoryLimit = 48 << 20

	// MaxDecodes is the number of requests that may be decoded at once;
	// the rest wait for up to DecodeWait and are then answered 503 with
	// Retry-After. toll and its sinks run on one CPU by default, so more
	// would only interleave them.
	MaxDecodes = 4

	// DecodeWait is the longest a request waits for a decode slot or for
	// memory before it is answered 503.
	DecodeWait = time.Second

	// StallTimeout is the longest a request body may go without sending a
	// byte before the sink drops the connection. Elastic's APM agents
	// stream events into one request for up to api_request_time (10 s by
	// default) and send nothing while the application is idle, so it is
	// longer than that. A stalled body holds only what it sent.
	StallTimeout = 15 * time.Second

	// MinBodyRate is the least rate, in bytes a second, at which a body
	// must arrive once it has taken StallTimeout: a body that trickles a
	// byte every few seconds never stalls for StallTimeout, and would
	// hold a connection (of MaxConns) until the server's ReadTimeout. A
	// body of n bytes may take StallTimeout + n/MinBodyRate in all: an
	// Elastic agent's stream of a few KiB over its 10 s, or an upload of
	// MaxBodyBytes at this rate, each fits, on the loopback a sink
	// listens on.
	MinBodyRate = 64 << 10

	// MaxConns is the number of connections the sink serves at once:
	// each holds buffers and a goroutine, and an agent opens a few.
	// Past it, new connections wait in the kernel's backlog until one
	// closes.
	MaxConns = 256

	// PressureConns is the number of open connections from which the
	// sink is under pressure (three quarters of MaxConns, where an
	// agent opens a few): from there on, a body on a connection that has
	// not yet had a request accepted (see PressedBodyGrace) must arrive
	// at PressedBodyRate. 300 connections trickling a byte every 10 s
	// into bodies otherwise held every connection for StallTimeout each,
	// dialling again when dropped, and an exporter that had to dial
	// (its first connection, or one closed while idle) waited behind
	// them in the backlog, its exports timing out, for most of a minute.
	PressureConns = MaxConns * 3 / 4

	// PressedBodyGrace is how long a body on an unproven connection
	// (none of its requests accepted yet) may take, besides its bytes at
	// PressedBodyRate, and go without sending a byte, while the sink is
	// under pressure (PressureConns). It bounds how long an attacker's
	// connection keeps a place a newcomer waits for: an exporter's batch
	// on the loopback arrives in milliseconds. The allowance is on the
	// bytes received, never on a Content-Length announced.
	PressedBodyGrace = time.Second

	// PressedBodyRate is the least rate, in bytes a second, of a body on
	// an unproven connection while the sink is under pressure: a few KiB
	// a second, which a trickle (a byte every few seconds) is far below
	// and any exporter's upload far above.
	PressedBodyRate = 4 << 10

	// minReadWindow is the least time a read of a body is given, however
	// late: a sink at idle priority may not run for a while, and bytes
	// that arrived meanwhile are there to be read.
	minReadWindow = 100 * time.Millisecond

	// retryAfter is the Retry-After, in seconds, of a 503.
	retryAfter = 1

	// pooledBuffer is the largest buffer kept in the pool for reuse;
	// larger ones are left to the collector.
	pooledBuffer = 1 << 20

	// firstRead is the size of the buffer a body is first read into. It
	// grows as the body arrives; a claimed Content-Length never grows it.
	// It is small because a body that trickles, or an HTTP/2 stream whose
	// client sent a little and holds it, keeps its buffer for up to
	// StallTimeout: 1,000 such requests (250 connections of 4 streams)
	// each held 32 KiB, most of the memory budget, and took the sink past
	// 100 MB. A typical batch (0.1–0.5 MiB) costs a few more doublings.
	firstRead = 4 << 10
)

// limits are a sink's bounds; fields, so that tests can lower them
// before Start.
type limits struct {
	maxBody, maxDecoded int64
	maxRatio, ratioFrom int64
	maxGRPC             int
	memory              int64
	decodes, conns      int
	pressureConns       int
	wait, stall         time.Duration
	minRate             int64 // bytes a second
	pressedGrace        time.Duration
	pressedRate         int64 // bytes a second
}

// bodyDeadline returns when the next read of a body that began at start
// and has sent n bytes must end. Normally that is within the stall
// timeout of now, and within stall + n/minRate of start; a body pressed
// (an unproven connection while the sink is under pressure) has
// pressedGrace for both and must keep to pressedRate:
//
//	normal:  min(now + stall, start + stall + n/minRate)
//	pressed: min(now + grace, start + grace + n/pressedRate)
//
// Either way a read is given at least minReadWindow from now.
func (l limits) bodyDeadline(start, now time.Time, n int64, pressed bool) time.Time {
	wait, rate := l.stall, l.minRate
	if pressed {
		wait, rate = l.pressedGrace, l.pressedRate
	}
	d := now.Add(wait)
	if byRate := start.Add(wait + time.Duration(float64(n)/float64(rate)*float64(time.Second))); byRate.Before(d) {
		d = byRate
	}
	if least := now.Add(minReadWindow); d.Before(least) {
		d = least
	}
	return d
}

// defaultLimits returns the limits documented by the constants above.
func defaultLimits() limits {
	return limits{maxBody: MaxBodyBytes, maxDecoded: MaxDecodedBytes, maxRatio: MaxRatio, ratioFrom: RatioFrom, maxGRPC: MaxGRPCMessageBytes,
		memory: MemoryBudget, decodes: MaxDecodes, conns: MaxConns, pressureConns: PressureConns,
		wait: DecodeWait, stall: StallTimeout, minRate: MinBodyRate,
		pressedGrace: PressedBodyGrace, pressedRate: PressedBodyRate}
}

// check reports limits under which some acceptable request could never be
// served.
func (l limits) check() error {
	if l.maxBody <= 0 || l.maxDecoded <= 0 || l.maxRatio <= 0 || l.ratioFrom <= 0 || l.maxGRPC <= 0 || l.decodes <= 0 || l.conns <= 0 || l.wait <= 0 || l.stall <= 0 || l.minRate <= 0 ||
		l.pressureConns <= 0 || l.pressedGrace <= 0 || l.pressedRate <= 0 {
		return fmt.Errorf("limits must be positive: %+v", l)
	}
	if need := max(l.maxBody+l.maxDecoded*(1+pdataPerByte), int64(l.maxGRPC)*(2+pdataPerByte)); l.memory < need {
		return fmt.Errorf("memory budget %d bytes is below the largest request's %d", l.memory, need)
	}
	return nil
}

// busy returns the error of a request that found no decode slot or
// memory in time.
func busy() *requestError {
	return &requestError{status: http.StatusServiceUnavailable,
		msg: "sink busy: too many requests in flight, retry later"}
}

// lease is the memory one request holds against the sink's budget. It is
// released, all at once, when the request has been answered.
type lease struct {
	s    *Sink
	ctx  context.Context
	held int64
	slot bool // a decode slot is held
}

// newLease returns an empty lease for a request with context ctx.
func (s *Sink) newLease(ctx context.Context) *lease {
	return &lease{s: s, ctx: ctx}
}

// grow takes n more bytes of the budget, waiting for up to the decode wait.
func (l *lease) grow(n int64) *requestError {
	if n <= 0 {
		return nil
	}
	if l.held+n > l.s.lim.memory {
		return &requestError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("request needs more than the sink's %d bytes of memory", l.s.lim.memory)}
	}
	if !l.s.mem.TryAcquire(n) {
		ctx, cancel := context.WithTimeout(l.ctx, l.s.lim.wait)
		defer cancel()
		if err := l.s.mem.Acquire(ctx, n); err != nil {
			return busy()
		}
	}
	l.held += n
	return nil
}

// decodeSlot takes one of the sink's decode slots, waiting for up to the
// decode wait; the lease gives it back.
func (l *lease) decodeSlot() *requestError {
	if l.slot {
		return nil
	}
	if !l.s.slots.TryAcquire(1) {
		ctx, cancel := context.WithTimeout(l.ctx, l.s.lim.wait)
		defer cancel()
		if err := l.s.slots.Acquire(ctx, 1); err != nil {
			return busy()
		}
	}
	l.slot = true
	return nil
}

// release gives back everything the lease holds.
func (l *lease) release() {
	if l.held > 0 {
		l.s.mem.Release(l.held)
		l.held = 0
	}
	if l.slot {
		l.s.slots.Release(1)
		l.slot = false
	}
}

// newBudget returns the semaphores of limits l: bytes of memory, and
// decode slots.
func newBudget(l limits) (mem, slots *semaphore.Weighted) {
	return semaphore.NewWeighted(l.memory), semaphore.NewWeighted(int64(l.decodes))
}

// getBuffer returns an empty buffer of at least n bytes' capacity, charged
// to l: from the pool when it holds one.
func (s *Sink) getBuffer(l *lease, n int) ([]byte, *requestError) {
	if n <= pooledBuffer {
		if p, ok := s.bufs.Get().(*[]byte); ok && cap(*p) >= n {
			if rerr := l.grow(int64(cap(*p))); rerr != nil {
				s.bufs.Put(p)
				return nil, rerr
			}
			return (*p)[:0], nil
		}
	}
	if rerr := l.grow(int64(n)); rerr != nil {
		return nil, rerr
	}
	return make([]byte, 0, n), nil
}

// putBuffer returns b to the pool unless it is too large to keep.
func (s *Sink) putBuffer(b []byte) {
	if b == nil || cap(b) > pooledBuffer || cap(b) < firstRead {
		return
	}
	b = b[:0]
	s.bufs.Put(&b)
}

// readBody reads r's body as sent, up to the wire limit, into a buffer
// charged to l, and returns it with the number of bytes read (which is
// also returned when reading fails). The buffer starts small and doubles as
// the body arrives, so a Content-Length that is claimed and never sent
// costs nothing; one above the limit is refused before anything is read.
// A body that sends nothing for the stall timeout, or arrives slower than
// the least rate (bodyDeadline; stricter on an unproven connection while
// the sink is under pressure), is dropped.
func (s *Sink) readBody(w http.ResponseWriter, r *http.Request, l *lease) ([]byte, int64, *requestError) {
	tooLarge := &requestError{status: http.StatusRequestEntityTooLarge,
		msg: fmt.Sprintf("request body exceeds %d bytes", s.lim.maxBody)}
	if r.ContentLength > s.lim.maxBody {
		return nil, 0, tooLarge
	}
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil, 0, nil
	}
	buf, rerr := s.getBuffer(l, firstRead)
	if rerr != nil {
		return nil, 0, rerr
	}
	rc := http.NewResponseController(w)
	start := time.Now()
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > s.lim.maxBody {
				return buf, int64(len(buf)), tooLarge
			}
			grown := min(2*int64(cap(buf)), s.lim.maxBody+1)
			// The old buffer is garbage from here on: the collector's
			// headroom covers it, the budget what is live.
			if rerr := l.grow(grown - int64(cap(buf))); rerr != nil {
				return buf, int64(len(buf)), rerr
			}
			nb := make([]byte, len(buf), grown)
			copy(nb, buf)
			s.putBuffer(buf)
			buf = nb
		}
		// Not every writer can (tests' recorders).
		_ = rc.SetReadDeadline(s.bodyDeadline(r.Context(), start, time.Now(), int64(len(buf))))
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			// No deadline while the body is decoded and answered: the
			// server sets the next request's own.
			_ = rc.SetReadDeadline(time.Time{})
			return buf, int64(len(buf)), nil
		}
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				return buf, int64(len(buf)), tooLarge
			}
			st := http.StatusBadRequest
			if errors.Is(err, os.ErrDeadlineExceeded) {
				st = http.StatusRequestTimeout
			}
			return buf, int64(len(buf)), &requestError{status: st, msg: fmt.Sprintf("read request body: %v", err)}
		}
	}
}

// compression is a Content-Encoding the sink decodes.
type compression int

const (
	identity compression = iota
	gzipped
	deflated
)

// contentEncoding returns the compression named by r's Content-Encoding.
func contentEncoding(r *http.Request) (compression, *requestError) {
	ce := r.Header.Get("Content-Encoding")
	switch strings.ToLower(strings.TrimSpace(ce)) {
	case "", "identity":
		return identity, nil
	case "gzip", "x-gzip":
		return gzipped, nil
	case "deflate":
		return deflated, nil
	}
	return identity, &requestError{status: http.StatusUnsupportedMediaType,
		msg: fmt.Sprintf("unsupported Content-Encoding %q (use gzip, deflate or none)", ce)}
}

// decodeBody returns raw decompressed according to r's Content-Encoding,
// in a buffer charged to l when it is compressed.
func (s *Sink) decodeBody(r *http.Request, raw []byte, l *lease) ([]byte, *requestError) {
	c, rerr := contentEncoding(r)
	if rerr != nil {
		return nil, rerr
	}
	return s.decompress(c, raw, l)
}

// decompress returns raw decompressed with c, up to the decoded limit.
func (s *Sink) decompress(c compression, raw []byte, l *lease) ([]byte, *requestError) {
	return s.decompressUpTo(c, raw, l, s.lim.maxDecoded)
}

// decompressUpTo returns raw decompressed with c, up to limit bytes. It
// decompresses twice: first into nothing, counting, so that a body over
// the limit (a gzip bomb) is refused having kept nothing, then into a
// buffer of exactly the size counted, charged to l. The first pass also
// gives up on a body that decompresses to more than MaxRatio times the
// bytes it has read so far, once past RatioFrom: a bomb then costs the
// sink a megabyte of inflating, not the whole limit.
func (s *Sink) decompressUpTo(c compression, raw []byte, l *lease, limit int64) ([]byte, *requestError) {
	if c == identity {
		return raw, nil
	}
	what := "gunzip"
	if c == deflated {
		what = "inflate"
	}
	var n int64
	err := s.withReader(c, raw, func(zr io.Reader, read func() int64) error {
		var err error
		n, err = io.Copy(io.Discard, &ratioCheck{r: io.LimitReader(zr, limit+1), read: read, from: s.lim.ratioFrom, most: s.lim.maxRatio})
		return err
	})
	if errors.Is(err, errRatio) {
		return nil, &requestError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("request body decompresses to more than %d times its size", s.lim.maxRatio)}
	}
	if err != nil {
		return nil, &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf("%s request body: %v", what, err)}
	}
	if n > limit {
		return nil, &requestError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("decompressed request body exceeds %d bytes", limit)}
	}
	if rerr := l.grow(n); rerr != nil {
		return nil, rerr
	}
	out := make([]byte, n)
	err = s.withReader(c, raw, func(zr io.Reader, _ func() int64) error {
		_, err := io.ReadFull(zr, out)
		return err
	})
	if err != nil { // cannot happen: the same bytes decompressed a moment ago
		return nil, &requestError{status: http.StatusBadRequest, msg: fmt.Sprintf("%s request body: %v", what, err)}
	}
	return out, nil
}

// errRatio is ratioCheck's error for a body that decompresses beyond
// the sink's ratio.
var errRatio = errors.New("compression ratio above the limit")

// ratioCheck reads r, a decompressor, and fails with errRatio once it
// has given more than RatioFrom bytes and more than MaxRatio times the
// compressed bytes read says it has consumed.
type ratioCheck struct {
	r          io.Reader
	read       func() int64
	n          int64 // bytes given so far
	from, most int64 // ratioFrom and maxRatio
}

func (c *ratioCheck) Read(p []byte) (int, error) {
	m, err := c.r.Read(p)
	c.n += int64(m)
	if c.n > c.from && c.n > c.most*c.read() {
		return m, errRatio
	}
	return m, err
}

// withReader calls f with a reader of raw decompressed with c, pooled,
// and a function that says how many bytes of raw it has consumed.
// HTTP's deflate is a zlib stream (RFC 9110, 8.4.1.2), which is what
// Elastic's APM agents send; some clients send bare DEFLATE data instead
// (RFC 1951), which is accepted too when the body does not start with a
// zlib header.
func (s *Sink) withReader(c compression, raw []byte, f func(zr io.Reader, read func() int64) error) error {
	br := bytes.NewReader(raw)
	// The decompressors read a bytes.Reader a byte at a time (it is an
	// io.ByteReader), never ahead of what they have decoded.
	read := func() int64 { return int64(len(raw) - br.Len()) }
	switch {
	case c == gzipped:
		zr, _ := s.gzips.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(br)
		} else {
			err = zr.Reset(br)
		}
		if err != nil {
			return err
		}
		defer s.gzips.Put(zr)
		return f(zr, read)
	case zlibHeader(raw):
		zr, _ := s.zlibs.Get().(io.ReadCloser)
		var err error
		if zr == nil {
			zr, err = zlib.NewReader(br)
		} else {
			err = zr.(zlib.Resetter).Reset(br, nil)
		}
		if err != nil {
			return err
		}
		defer s.zlibs.Put(zr)
		return f(zr, read)
	default:
		fr, _ := s.flates.Get().(io.ReadCloser)
		if fr == nil {
			fr = flate.NewReader(br)
		} else if err := fr.(flate.Resetter).Reset(br, nil); err != nil {
			return err
		}
		defer s.flates.Put(fr)
		return f(fr, read)
	}
}

// zlibHeader reports whether b starts with a zlib header (RFC 1950, 2.2):
// compression method 8 and a check value that makes the first two bytes a
// multiple of 31.
func zlibHeader(b []byte) bool {
	return len(b) >= 2 && b[0]&0x0f == 8 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0
}

// busyHeaders sets Retry-After on an answer to a request refused for want
// of room.
func busyHeaders(w http.ResponseWriter, rerr *requestError) {
	if rerr.status == http.StatusServiceUnavailable || rerr.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
}
