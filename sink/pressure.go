package sink

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// A sink is under pressure when PressureConns or more connections are
// open. Under pressure a connection that has had no request accepted yet
// (unproven) must send its bodies at PressedBodyRate after
// PressedBodyGrace, so that connections that trickle bodies give up their
// places within about a second, and a client that has to dial (an agent
// starting, or one whose connection was closed) waits that long behind
// them in the kernel's backlog, not StallTimeout. A proven connection, on
// which a request was accepted, keeps the normal allowance: an agent that
// streams its events (Elastic's) goes on as before.

// connKey is the context key of a connection's *connInfo.
type connKey struct{}

// connInfo is what the sink knows of one connection.
type connInfo struct {
	proven atomic.Bool // a request on it was accepted
}

// connContext gives each connection's requests a *connInfo of their own
// (http.Server.ConnContext).
func (s *Sink) connContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, new(connInfo))
}

// prove marks the connection of a request with context ctx as one on
// which a request was accepted.
func prove(ctx context.Context) {
	if ci, ok := ctx.Value(connKey{}).(*connInfo); ok {
		ci.proven.Store(true)
	}
}

// pressed reports whether a body read by a request with context ctx is
// held to the allowance under pressure: the sink has PressureConns or more
// connections open, and none of the request's connection's requests has
// been accepted yet.
func (s *Sink) pressed(ctx context.Context) bool {
	if s.open.Load() < int64(s.lim.pressureConns) {
		return false
	}
	ci, ok := ctx.Value(connKey{}).(*connInfo)
	return !ok || !ci.proven.Load()
}

// bodyDeadline returns when the next read of a body that began at start
// and has sent n bytes, read by a request with context ctx, must end
// (limits.bodyDeadline).
func (s *Sink) bodyDeadline(ctx context.Context, start, now time.Time, n int64) time.Time {
	return s.lim.bodyDeadline(start, now, n, s.pressed(ctx))
}
