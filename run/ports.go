package run

import (
	"fmt"
	"net"
)

// portPool hands out free TCP ports on loopback. It holds a listener on
// every port it has handed out until release, so no two names get the same
// port; release must be called before the services that use them start.
type portPool struct {
	held []net.Listener
}

// take returns a free port and keeps it reserved.
func (p *portPool) take() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	p.held = append(p.held, l)
	return l.Addr().(*net.TCPAddr).Port, nil
}

// release frees every reserved port for the services to bind.
func (p *portPool) release() {
	for _, l := range p.held {
		l.Close()
	}
	p.held = nil
}
