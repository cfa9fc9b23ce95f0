package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// toll speaks HTTP/1.1 itself rather than through net/http: a load
// generator sends the same few requests millions of times, and net/http's
// Transport spends most of a request's CPU on what a generator does not
// need (two goroutines per connection, a request and response object per
// request, header maps). Here a connection belongs to one worker, requests
// are rendered into a reused buffer, and responses are parsed in place, so
// the hot path does not allocate.

// readBufferSize is the size of a connection's read buffer, small because
// a pool may hold hundreds of connections. A response's status line, and
// the header lines toll reads (Content-Length, Transfer-Encoding,
// Connection), must fit in it; longer lines of other headers are skipped.
const readBufferSize = 4 << 10

// errMalformed reports a response that is not HTTP/1.x.
var errMalformed = errors.New("malformed HTTP response")

// dialer opens connections to one target host.
type dialer struct {
	addr    string      // host:port
	tls     *tls.Config // nil for http
	timeout time.Duration
	net     net.Dialer

	mu     sync.Mutex
	conns  map[*conn]struct{} // open connections, closed at the end of the run
	closed bool
	opened uint64 // connections opened
}

func newDialer(addr string, tlsConfig *tls.Config, timeout time.Duration) *dialer {
	return &dialer{
		addr: addr, tls: tlsConfig, timeout: timeout,
		net:   net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second},
		conns: make(map[*conn]struct{}),
	}
}

// dial opens a connection, which is closed by closeAll if it is still open
// then.
func (d *dialer) dial(ctx context.Context) (*conn, error) {
	nc, err := d.net.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, err
	}
	var rw io.ReadWriter = nc
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		if d.tls == nil {
			if rc, err := tc.SyscallConn(); err == nil {
				rw = newRawIO(rc)
			}
		}
	}
	if d.tls != nil {
		nc = tls.Client(nc, d.tls)
		rw = nc
	}
	c := &conn{nc: nc, rw: rw, br: bufio.NewReaderSize(rw, readBufferSize), d: d}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		nc.Close()
		return nil, net.ErrClosed
	}
	d.conns[c] = struct{}{}
	d.opened++
	return c, nil
}

// closeAll closes every open connection, aborting the requests on them,
// and makes later dials fail.
func (d *dialer) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for c := range d.conns {
		c.nc.Close()
	}
	clear(d.conns)
}

// connections returns how many connections were opened.
func (d *dialer) connections() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opened
}

// conn is one keep-alive connection, used by one goroutine at a time.
type conn struct {
	nc   net.Conn
	rw   io.ReadWriter // nc, or raw reads and writes of its socket
	br   *bufio.Reader
	d    *dialer
	used bool // a response has been read on it
	wbuf []byte
}

// close closes the connection.
func (c *conn) close() {
	c.d.mu.Lock()
	delete(c.d.conns, c)
	c.d.mu.Unlock()
	c.nc.Close()
}

// response is what roundTrip learnt about a response.
type response struct {
	status int
	keep   bool // the connection may be reused
	// started is set once any byte of the response was read: a request
	// that failed before that on a reused connection may be retried.
	started bool
}

// roundTrip writes the request in c.wbuf and reads the response, discarding
// its body, all before deadline. head says the request was a HEAD (its
// response has no body).
func (c *conn) roundTrip(deadline time.Time, head bool) (response, error) {
	var r response
	if err := c.nc.SetDeadline(deadline); err != nil {
		return r, err
	}
	if raw, ok := c.rw.(*rawIO); ok {
		if err := raw.Send(c.wbuf); err != nil {
			return r, err
		}
	} else if _, err := c.rw.Write(c.wbuf); err != nil {
		return r, err
	}
	r, err := readResponse(c.br, head)
	if err == nil {
		c.used = true
	}
	return r, err
}

// readResponse reads one response from br, discarding its body. head says
// the request was a HEAD (its response has no body). It reads no further
// than the response's end, so that the next one on a kept connection
// starts where it stopped.
func readResponse(br *bufio.Reader, head bool) (response, error) {
	var r response
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			r.started = true
		}
		if err != nil {
			return r, readErr(err)
		}
		// "HTTP/1.1 200 OK\r\n": the status is three digits, the first
		// 1 to 9, followed by a space (or, leniently, the line's end).
		if len(line) < 13 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return r, errMalformed
		}
		r.status = atoi3(line[9:12])
		if r.status < 100 || (line[12] != ' ' && line[12] != '\r' && line[12] != '\n') {
			return r, errMalformed
		}
		r.keep = line[7] == '1' // HTTP/1.1 keeps the connection by default
		length, chunked, err := readHeader(br, &r)
		if err != nil {
			return r, err
		}
		if r.status >= 100 && r.status < 200 && r.status != 101 {
			continue // an interim response: the final one follows
		}
		switch {
		case head || r.status == 204 || r.status == 304:
		case chunked:
			err = discardChunked(br)
		case length >= 0:
			_, err = br.Discard(int(length))
		default: // the body runs to the end of the connection
			_, err = br.WriteTo(io.Discard)
			r.keep = false
		}
		if err != nil {
			return r, readErr(err)
		}
		return r, nil
	}
}

// readHeader reads header lines up to the blank line, and returns the
// Content-Length (-1 if absent) and whether the body is chunked. It notes
// in r whether the connection may be kept.
func readHeader(br *bufio.Reader, r *response) (length int64, chunked bool, err error) {
	length = -1
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line (a big cookie): its name is in this part.
			if colon := bytes.IndexByte(line, ':'); colon <= 0 || headerOf(line[:colon]) != otherHeader {
				return 0, false, fmt.Errorf("%w: header line %.20q… longer than %d bytes", errMalformed, line, readBufferSize)
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return 0, false, readErr(err)
			}
			continue
		}
		if err != nil {
			return 0, false, readErr(err)
		}
		line = trimCRLF(line)
		if len(line) == 0 {
			return length, chunked, nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, false, errMalformed
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch headerOf(name) {
		case contentLength:
			n, ok := atoi(value)
			if !ok {
				return 0, false, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
			length = n
		case transferEncoding:
			chunked = containsFold(value, "chunked")
		case connection:
			if containsFold(value, "close") {
				r.keep = false
			} else if containsFold(value, "keep-alive") {
				r.keep = true
			}
		}
	}
}

// header is one of the response headers readHeader reads.
type header int

const (
	otherHeader header = iota // one readHeader skips
	contentLength
	transferEncoding
	connection
)

// headerOf returns which header name (any case) is.
func headerOf(name []byte) header {
	switch {
	case len(name) == 14 && bytes.EqualFold(name, []byte("Content-Length")):
		return contentLength
	case len(name) == 17 && bytes.EqualFold(name, []byte("Transfer-Encoding")):
		return transferEncoding
	case len(name) == 10 && bytes.EqualFold(name, []byte("Connection")):
		return connection
	}
	return otherHeader
}

// discardChunked reads a chunked body (RFC 9112 section 7.1) from br to
// its end, trailers included.
func discardChunked(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = trimCRLF(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if size == 0 {
			for { // trailers, up to a blank line
				line, err := br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(trimCRLF(line)) == 0 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(size)); err != nil {
			return err
		}
		if line, err := br.ReadSlice('\n'); err != nil {
			return err
		} else if len(trimCRLF(line)) != 0 {
			return fmt.Errorf("%w: chunk longer than its size", errMalformed)
		}
	}
}

// readErr turns an end of stream in the middle of a response into
// io.ErrUnexpectedEOF, so that it is not taken for a normal end.
func readErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// retryable reports whether a request that failed with err on a reused
// connection, before any of its response arrived, may be sent again on a
// fresh one: the server probably closed the idle connection as the request
// was being sent.
func retryable(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func trimCRLF(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// atoi3 parses a three-digit status code, or returns -1.
func atoi3(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// atoi parses a non-negative decimal number.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// containsFold reports whether the comma-separated list v holds token,
// ignoring case.
func containsFold(v []byte, token string) bool {
	for len(v) > 0 {
		var item []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			item, v = v, nil
		}
		if bytes.EqualFold(bytes.TrimSpace(item), []byte(token)) {
			return true
		}
	}
	return false
}
