package local

import (
	"net"
	"strconv"
	"testing"
)

// TestPortsBelowTheEphemeralRange checks that the pool hands out distinct
// ports below the kernel's ephemeral range, which outgoing connections
// cannot take between their release and the service's bind, and holds
// them until release.
func TestPortsBelowTheEphemeralRange(t *testing.T) {
	lo, ok := ephemeralLow()
	if !ok || lo <= minPort+portSpan/2 {
		t.Skipf("ephemeral range starts at %d: the pool lets the kernel choose", lo)
	}
	var pool portPool
	seen := map[int]bool{}
	for range 20 {
		p, err := pool.take()
		if err != nil {
			t.Fatal(err)
		}
		if p >= lo || p < minPort || seen[p] {
			t.Errorf("port %d: want a new one in [%d, %d)", p, minPort, lo)
		}
		seen[p] = true
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			l.Close()
			t.Errorf("port %d is not held before release", p)
		}
	}
	pool.release()
	for p := range seen {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Errorf("port %d still held after release: %v", p, err)
			continue
		}
		l.Close()
	}
}
