package load

import (
	"context"
	"errors"
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
		ctxErr error
		want   outcome
	}{
		{"200", 200, nil, nil, outcomeOK},
		{"204", 204, nil, nil, outcomeOK},
		{"302 is not followed but OK", 302, nil, nil, outcomeOK},
		{"404", 404, nil, nil, outcome4xx},
		{"429", 429, nil, nil, outcome4xx},
		{"500", 500, nil, nil, outcome5xx},
		{"503", 503, nil, nil, outcome5xx},
		{"101", 101, nil, nil, outcomeOther},
		{"deadline of the request", 0, errors.New("net/http: request canceled"), context.DeadlineExceeded, outcomeTimeout},
		{"deadline in the error", 200, fmt.Errorf("reading body: %w", context.DeadlineExceeded), nil, outcomeTimeout},
		{"dial refused", 0, sysErr("dial", syscall.ECONNREFUSED), nil, outcomeConnect},
		{"dial timeout", 0, &net.OpError{Op: "dial", Err: timeoutErr{}}, nil, outcomeTimeout},
		{"name not resolved", 0, &net.DNSError{Err: "no such host", Name: "x.invalid"}, nil, outcomeConnect},
		{"reset while writing", 0, sysErr("write", syscall.ECONNRESET), nil, outcomeConnect},
		{"broken pipe while writing", 0, sysErr("write", syscall.EPIPE), nil, outcomeConnect},
		{"reset while reading", 0, sysErr("read", syscall.ECONNRESET), nil, outcomeOther},
		{"truncated body", 200, io.ErrUnexpectedEOF, nil, outcomeOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(tt.status, tt.err, tt.ctxErr); got != tt.want {
				t.Errorf("classify(%d, %v, %v) = %d, want %d", tt.status, tt.err, tt.ctxErr, got, tt.want)
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
