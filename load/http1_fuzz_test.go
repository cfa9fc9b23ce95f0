package load

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzReadResponse feeds the load generator's HTTP/1.1 response parser
// arbitrary bytes, as a kept connection would: response after response
// until one fails or does not keep the connection. It must never panic or
// read out of bounds, never consume more than it was given, and make
// progress with each response it accepts, or a kept connection would spin.
func FuzzReadResponse(f *testing.F) {
	seeds := []string{
		// net/http's own answers: Content-Length, and chunked when the
		// handler flushes.
		"HTTP/1.1 200 OK\r\nDate: Mon, 23 Nov 2026 19:00:00 GMT\r\nContent-Length: 6\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhello\n",
		"HTTP/1.1 200 OK\r\nDate: Mon, 23 Nov 2026 19:00:00 GMT\r\nContent-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n\n\r\n0\r\nTrailer: x\r\n\r\n",
		// Pipelined keep-alive responses, then one that closes.
		"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\nHTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
		// HTTP/1.0 keep-alive and a body that runs to the end.
		"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\nabcHTTP/1.0 200 OK\r\n\r\nto the end of the connection",
		// nginx's 404 and an interim 100 Continue before the answer.
		"HTTP/1.1 404 Not Found\r\nServer: nginx/1.22.1\r\nContent-Type: text/html\r\nContent-Length: 9\r\nConnection: keep-alive\r\n\r\nnot found",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
		// An oversized header of another name is skipped; an oversized
		// Content-Length line is refused.
		"HTTP/1.1 200 OK\r\nSet-Cookie: " + strings.Repeat("c", 5000) + "\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nContent-Length: " + strings.Repeat("1", 5000) + "\r\n\r\n",
		// Malformed and truncated.
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
		"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
		"",
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"), true) // HEAD: no body
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		cr := &countingReader{r: bytes.NewReader(data)}
		br := bufio.NewReaderSize(cr, readBufferSize)
		consumed := 0
		for n := 0; ; n++ {
			r, err := readResponse(br, head)
			now := cr.n - br.Buffered()
			if now < consumed || now > len(data) {
				t.Fatalf("response %d: consumed %d bytes, then %d, of %d", n, consumed, now, len(data))
			}
			if err != nil {
				return
			}
			if r.status < 100 || r.status > 999 {
				t.Fatalf("response %d: status %d accepted", n, r.status)
			}
			if now-consumed < len("HTTP/1.1 200\n") {
				t.Fatalf("response %d accepted from %d bytes, %q", n, now-consumed, data[consumed:now])
			}
			consumed = now
			if !r.keep {
				return
			}
		}
	})
}
