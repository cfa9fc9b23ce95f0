package sink

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// connTracker holds every open connection of a sink with its state
// (http.ConnState: new, idle or active) and when that state last changed,
// and chooses which to close when there are too many (victim). It is fed
// by the server's ConnState hook (Sink.connState); one mutex guards it,
// taken once per accepted connection and twice per request.
type connTracker struct {
	mu      sync.Mutex
	conns   map[net.Conn]*trackedConn
	byState [numTracked]trackedList // each oldest change first
	closing bool                    // set by closeAll: newcomers are closed at once
}

// trackedState is a connection's state as the tracker orders them: what
// to close first comes first.
type trackedState int

const (
	trackedNew    trackedState = iota // connected, no request sent yet
	trackedIdle                       // between requests
	trackedActive                     // a request in progress (HTTP/2: at least one)
	numTracked
)

// trackedConn is one open connection, linked into the list of its state.
type trackedConn struct {
	c          net.Conn
	state      trackedState
	since      time.Time // when state began
	prev, next *trackedConn
}

// trackedList is a doubly-linked list of connections, oldest change
// first: a connection that changes state goes to the back of its new
// state's list, so each list stays ordered by since without sorting.
type trackedList struct {
	head, tail *trackedConn
}

func (l *trackedList) pushBack(t *trackedConn) {
	t.prev, t.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = t
	} else {
		l.head = t
	}
	l.tail = t
}

func (l *trackedList) remove(t *trackedConn) {
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		l.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		l.tail = t.prev
	}
	t.prev, t.next = nil, nil
}

// opened tracks c, just accepted, as new at now. When that makes more than
// limit connections open, it stops tracking and returns another one for
// the caller to close (victim); after closeAll it returns c itself.
func (t *connTracker) opened(c net.Conn, now time.Time, limit int, quiet time.Duration) net.Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return c
	}
	if t.conns == nil {
		t.conns = make(map[net.Conn]*trackedConn, limit+1)
	}
	tc := &trackedConn{c: c, state: trackedNew, since: now}
	t.conns[c] = tc
	t.byState[trackedNew].pushBack(tc)
	if len(t.conns) <= limit {
		return nil
	}
	v := t.victim(now, quiet, tc)
	if v == nil {
		return nil
	}
	t.drop(v)
	return v.c
}

// victim returns the connection to close to make room for newcomer: of
// those whose state has not changed for quiet, the oldest that has sent no
// request, else the oldest idle, else the oldest active; when every
// connection changed state within quiet (a flood of connections), the one
// that changed longest ago. The newcomer is never chosen, so that a
// client that sends its request when it connects is served; nil when it is
// the only connection. victim is a pure function of the lists, so that
// tests choose the times.
func (t *connTracker) victim(now time.Time, quiet time.Duration, newcomer *trackedConn) *trackedConn {
	var oldest *trackedConn
	for st := range numTracked {
		c := t.byState[st].head
		if c == newcomer {
			c = c.next
		}
		if c == nil {
			continue
		}
		if now.Sub(c.since) >= quiet {
			return c
		}
		if oldest == nil || c.since.Before(oldest.since) {
			oldest = c
		}
	}
	return oldest
}

// changed records that c entered state at now; a connection not tracked
// (closed to make room, or accepted before closeAll) is left untracked.
func (t *connTracker) changed(c net.Conn, state trackedState, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tc, ok := t.conns[c]
	if !ok {
		return
	}
	t.byState[tc.state].remove(tc)
	tc.state, tc.since = state, now
	t.byState[state].pushBack(tc)
}

// closed stops tracking c.
func (t *connTracker) closed(c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tc, ok := t.conns[c]; ok {
		t.drop(tc)
	}
}

// drop stops tracking tc; t.mu is held.
func (t *connTracker) drop(tc *trackedConn) {
	t.byState[tc.state].remove(tc)
	delete(t.conns, tc.c)
}

// closeNew marks the tracker closing, so that opened returns every
// connection accepted from now on, and returns the connections that have
// not sent a request yet, for the caller to close.
func (t *connTracker) closeNew() []net.Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing = true
	var cs []net.Conn
	for tc := t.byState[trackedNew].head; tc != nil; tc = tc.next {
		cs = append(cs, tc.c)
	}
	return cs
}

// open returns the number of connections tracked.
func (t *connTracker) open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// connState is the server's ConnState hook: it tracks every connection
// (connTracker) and, when accepting one makes more than the limit open,
// closes the one doing least (victim). It also lets Close close at once
// the connections that have not sent a request yet: http.Server.Shutdown
// would otherwise wait up to 5 s for each, and HTTP clients commonly
// leave such connections behind (a connection dialled for a request that
// another one served). HTTP/2 connections (prior knowledge) report new,
// then active and idle as their streams open and end, and closed, all on
// the same net.Conn.
func (s *Sink) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		if v := s.conns.opened(c, time.Now(), s.lim.conns, s.lim.quiet); v != nil {
			_ = v.Close()
		}
	case http.StateActive:
		s.conns.changed(c, trackedActive, time.Now())
	case http.StateIdle:
		s.conns.changed(c, trackedIdle, time.Now())
	case http.StateClosed, http.StateHijacked:
		s.conns.closed(c)
	}
}
