package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
)

// ErrorCounts counts failed requests by cause.
type ErrorCounts struct {
	// Connect counts requests that could not be sent: the connection could
	// not be established (refused, unreachable, name not resolved, or no
	// file descriptor left for its socket: EMFILE, ENFILE) or was reset
	// while the request was being written.
	Connect uint64
	// Timeout counts requests without a complete response within
	// Config.Timeout of being sent.
	Timeout uint64
	// HTTP4xx counts responses with a 4xx status.
	HTTP4xx uint64
	// HTTP5xx counts responses with a 5xx status.
	HTTP5xx uint64
	// Other counts every other failure: a connection broken while reading
	// the response, a malformed response, a status outside 200-599, ...
	Other uint64
}

// Total returns the number of failed requests of all causes.
func (e ErrorCounts) Total() uint64 {
	return e.Connect + e.Timeout + e.HTTP4xx + e.HTTP5xx + e.Other
}

// ErrorExamples says, for each cause of ErrorCounts, how one failed
// request of that cause failed: the first one the generator recorded, as
// its error reads ("dial tcp 127.0.0.1:1: connect: connection refused") or
// as its status ("HTTP 503 Service Unavailable"). A cause with no failure
// is empty. A count says that requests failed; an example says why.
type ErrorExamples struct {
	Connect string
	Timeout string
	HTTP4xx string
	HTTP5xx string
	Other   string
}

// describe says how a request that ended with status (0 if none) and err
// failed.
func describe(status int, err error) string {
	if err != nil {
		return err.Error()
	}
	if text := http.StatusText(status); text != "" {
		return fmt.Sprintf("HTTP %d %s", status, text)
	}
	return fmt.Sprintf("HTTP %d", status)
}

// outcome is how one request ended.
type outcome int

const (
	outcomeOK outcome = iota
	outcomeConnect
	outcomeTimeout
	outcome4xx
	outcome5xx
	outcomeOther
	numOutcomes
)

// add counts n requests with outcome o, which must not be outcomeOK.
func (e *ErrorCounts) add(o outcome, n uint64) {
	switch o {
	case outcomeConnect:
		e.Connect += n
	case outcomeTimeout:
		e.Timeout += n
	case outcome4xx:
		e.HTTP4xx += n
	case outcome5xx:
		e.HTTP5xx += n
	default:
		e.Other += n
	}
}

// classify gives the outcome of a request that ended with the response status
// (0 if none) and error err.
func classify(status int, err error) outcome {
	if err != nil {
		return classifyErr(err)
	}
	switch {
	case status >= 200 && status < 400:
		return outcomeOK
	case status >= 400 && status < 500:
		return outcome4xx
	case status >= 500 && status < 600:
		return outcome5xx
	}
	return outcomeOther
}

// classifyErr gives the outcome of a request that failed with err.
func classifyErr(err error) outcome {
	if errors.Is(err, context.DeadlineExceeded) {
		return outcomeTimeout
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return outcomeTimeout
	}
	if op, ok := errors.AsType[*net.OpError](err); ok {
		switch op.Op {
		case "dial":
			return outcomeConnect
		case "write":
			if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
				return outcomeConnect
			}
		}
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return outcomeConnect
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return outcomeConnect
	}
	return outcomeOther
}
