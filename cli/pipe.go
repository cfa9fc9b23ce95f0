package cli

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// keepRunningOnBrokenPipe makes a write to a pipe whose reader has gone
// fail with EPIPE instead of killing toll. Go's runtime ends a program
// with SIGPIPE when a write to its standard output or error finds the
// pipe closed (`toll run FILE 2>&1 | head -2`), which would leave a run
// without its reports, its services' cgroups and its sinks' counts files
// behind. The signal is caught, not ignored: an ignored signal would stay
// ignored in the services toll starts, and change how they behave.
func keepRunningOnBrokenPipe() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// pipeTolerant writes to w until its reader has gone (EPIPE), then drops
// what it is given and reports it written: what toll prints as it runs is
// for whoever reads it, and a run whose reader stopped reading goes on to
// write its results.
type pipeTolerant struct {
	w    io.Writer
	gone atomic.Bool
}

func (p *pipeTolerant) Write(b []byte) (int, error) {
	if p.gone.Load() {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.gone.Store(true)
		return len(b), nil
	}
	return n, err
}
