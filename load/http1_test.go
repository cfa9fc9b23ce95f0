package load

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// scriptedServer accepts one connection and answers each request (read up to
// its blank line) with the next of responses, then closes.
func scriptedServer(t *testing.T, responses ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		for _, resp := range responses {
			for { // the request's head; these tests send no bodies
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			if _, err := io.WriteString(c, resp); err != nil {
				return
			}
		}
	}()
	return ln.Addr().String()
}

func TestRoundTripParsesResponses(t *testing.T) {
	tests := []struct {
		name     string
		response string
		head     bool
		status   int
		keep     bool
		wantErr  error
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 200, true, nil},
		{"chunked with trailer", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", false, 200, true, nil},
		{"connection close", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false, 503, false, nil},
		{"1.0 without length reads to the end", "HTTP/1.0 200 OK\r\n\r\nall of it", false, 200, false, nil},
		{"1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", false, 200, true, nil},
		{"interim response first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", false, 201, true, nil},
		{"HEAD has no body", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", true, 200, true, nil},
		{"204 has no body", "HTTP/1.1 204 No Content\r\n\r\n", false, 204, true, nil},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", false, 0, false, errMalformed},
		{"status 000 (found by FuzzReadResponse)", "HTTP/1.0 000\r\n\r\n", false, 0, false, errMalformed},
		{"four-digit status", "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", false, 0, false, errMalformed},
		{"status without a reason", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", false, 200, true, nil},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false, 200, true, errMalformed},
		{"truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", false, 200, true, io.ErrUnexpectedEOF},
		{"header line longer than the buffer is skipped", "HTTP/1.1 200 OK\r\nSet-Cookie: " + strings.Repeat("c", 3*readBufferSize) + "\r\nContent-Length: 2\r\n\r\nok", false, 200, true, nil},
		{"long Content-Length line", "HTTP/1.1 200 OK\r\nContent-Length: " + strings.Repeat("0", 2*readBufferSize) + "2\r\n\r\nok", false, 200, true, errMalformed},
		{"body longer than the buffer", "HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n" + strings.Repeat("b", 10000), false, 200, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDialer(scriptedServer(t, tt.response), nil, time.Second)
			defer d.closeAll()
			c, err := d.dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			c.wbuf = []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			r, err := c.roundTrip(time.Now().Add(5*time.Second), tt.head)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tt.status || r.keep != tt.keep {
				t.Errorf("status %d keep %v, want %d %v", r.status, r.keep, tt.status, tt.keep)
			}
		})
	}
}

func TestRoundTripKeepsTheConnection(t *testing.T) {
	// Two responses on one connection, the first chunked: the parser must
	// stop exactly at its end for the second to parse.
	addr := scriptedServer(t,
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!")
	d := newDialer(addr, nil, time.Second)
	defer d.closeAll()
	c, err := d.dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.wbuf = []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	for _, want := range []int{200, 404} {
		r, err := c.roundTrip(time.Now().Add(5*time.Second), false)
		if err != nil || r.status != want {
			t.Fatalf("status %d, err %v; want %d", r.status, err, want)
		}
	}
	if n := d.connections(); n != 1 {
		t.Errorf("%d connections opened, want 1", n)
	}
}

func TestRoundTripTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts and never answers
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			time.Sleep(2 * time.Second)
		}
	}()
	d := newDialer(ln.Addr().String(), nil, time.Second)
	defer d.closeAll()
	c, err := d.dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.wbuf = []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	_, err = c.roundTrip(time.Now().Add(100*time.Millisecond), false)
	if got := classify(0, err); got != outcomeTimeout {
		t.Errorf("err %v classified %d, want a timeout", err, got)
	}
}

func TestContainsFold(t *testing.T) {
	for _, tt := range []struct {
		v, token string
		want     bool
	}{
		{"chunked", "chunked", true},
		{"gzip, Chunked", "chunked", true},
		{"keep-alive, Upgrade", "close", false},
		{"", "close", false},
	} {
		if got := containsFold([]byte(tt.v), tt.token); got != tt.want {
			t.Errorf("containsFold(%q, %q) = %v", tt.v, tt.token, got)
		}
	}
	if !strings.Contains(errMalformed.Error(), "malformed") {
		t.Error(errMalformed)
	}
}
