package load

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	sysErr := func(op string, errno syscall.Errno) error {
		return fmt.Errorf("wrapped: %w", &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)})
	}
	tests := []struct {
		name   string
		status int
		err    error
		want   outcome
	}{
		{"200", 200, nil, outcomeOK},
		{"204", 204, nil, outcomeOK},
		{"302 is not followed but OK", 302, nil, outcomeOK},
		{"404", 404, nil, outcome4xx},
		{"429", 429, nil, outcome4xx},
		{"500", 500, nil, outcome5xx},
		{"503", 503, nil, outcome5xx},
		{"101", 101, nil, outcomeOther},
		{"deadline of the request", 0, &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, outcomeTimeout},
		{"deadline in the error", 200, fmt.Errorf("reading body: %w", context.DeadlineExceeded), outcomeTimeout},
		{"dial refused", 0, sysErr("dial", syscall.ECONNREFUSED), outcomeConnect},
		{"no file descriptor for the socket", 0, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.EMFILE)}, outcomeConnect},
		{"no file descriptor in the system", 0, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", syscall.ENFILE)}, outcomeConnect},
		{"dial timeout", 0, &net.OpError{Op: "dial", Err: timeoutErr{}}, outcomeTimeout},
		{"name not resolved", 0, &net.DNSError{Err: "no such host", Name: "x.invalid"}, outcomeConnect},
		{"reset while writing", 0, sysErr("write", syscall.ECONNRESET), outcomeConnect},
		{"broken pipe while writing", 0, sysErr("write", syscall.EPIPE), outcomeConnect},
		{"reset while reading", 0, sysErr("read", syscall.ECONNRESET), outcomeOther},
		{"truncated body", 200, io.ErrUnexpectedEOF, outcomeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.status, tt.err); got != tt.want {
				t.Errorf("classify(%d, %v) = %d, want %d", tt.status, tt.err, got, tt.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestErrorCountsAddAndTotal(t *testing.T) {
	var e ErrorCounts
	for o := outcomeConnect; o < numOutcomes; o++ {
		e.add(o, uint64(o))
	}
	want := ErrorCounts{Connect: 1, Timeout: 2, HTTP4xx: 3, HTTP5xx: 4, Other: 5}
	if e != want || e.Total() != 15 {
		t.Errorf("counts = %+v (total %d), want %+v (total 15)", e, e.Total(), want)
	}
}

// TestErrorExamples runs load against targets that fail in each way and
// checks that the Result says how, for the cause that failed and no other.
func TestErrorExamples(t *testing.T) {
	status := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	// A port that refuses: one that was listened on, then closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()

	tests := []struct {
		name string
		url  string
		want func(ErrorExamples) string // the example of the cause expected
		has  string                     // what that example must contain
	}{
		{"503", status(503), func(e ErrorExamples) string { return e.HTTP5xx }, "HTTP 503 Service Unavailable"},
		{"404", status(404), func(e ErrorExamples) string { return e.HTTP4xx }, "HTTP 404 Not Found"},
		{"refused", refused, func(e ErrorExamples) string { return e.Connect }, "connection refused"},
		{"timeout", slow.URL, func(e ErrorExamples) string { return e.Timeout }, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := runLoad(t, context.Background(), Config{
				Requests: []Request{{URL: tt.url}},
				Pacer:    ConstantPacer{Rate: 50},
				Start:    soon(),
				Duration: 200 * time.Millisecond,
				Timeout:  100 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, res)
			if res.Errors.Total() == 0 {
				t.Fatalf("no failed request: %+v", res.Errors)
			}
			got := tt.want(res.ErrorExamples)
			if !strings.Contains(got, tt.has) {
				t.Errorf("example %q, want it to say %q (all: %+v)", got, tt.has, res.ErrorExamples)
			}
			// Every other cause that failed has an example, and none
			// that did not.
			e, x := res.Errors, res.ErrorExamples
			for _, c := range []struct {
				n       uint64
				example string
			}{{e.Connect, x.Connect}, {e.Timeout, x.Timeout}, {e.HTTP4xx, x.HTTP4xx}, {e.HTTP5xx, x.HTTP5xx}, {e.Other, x.Other}} {
				if (c.n > 0) != (c.example != "") {
					t.Errorf("counts %+v and examples %+v disagree", e, x)
				}
			}
		})
	}
}
