package load

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
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
