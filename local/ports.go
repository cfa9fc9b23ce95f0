package local

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// portPool hands out free TCP ports on loopback. It holds a listener on
// every port it has handed out until release, so no two names get the same
// port; release must be called before the services that use them start.
type portPool struct {
	held []net.Listener
}

// take returns a free port and keeps it reserved until release.
//
// The port is drawn below the kernel's ephemeral range when it can be: a
// port of that range, once released for the service to bind, can be taken
// first by any process's outgoing connection (a load generator's, another
// run's), and the service then fails to start with "address already in
// use". Outgoing connections never take a port below the range.
func (p *portPool) take() (int, error) {
	if lo, ok := ephemeralLow(); ok && lo > minPort+portSpan/2 {
		from := max(minPort, lo-portSpan)
		for range portTries {
			port := from + rand.IntN(lo-from)
			if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				p.held = append(p.held, l)
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	p.held = append(p.held, l)
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Where take draws ports: up to portSpan ports below the ephemeral range,
// never below minPort, in at most portTries draws before it lets the kernel
// choose.
const (
	minPort   = 10000
	portSpan  = 16384
	portTries = 32
)

// ephemeralLow returns the first port of the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), which outgoing connections draw from.
func ephemeralLow() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	lo, err := strconv.Atoi(f[0])
	return lo, err == nil
}

// release frees every reserved port for the services to bind.
func (p *portPool) release() {
	for _, l := range p.held {
		l.Close()
	}
	p.held = nil
}
