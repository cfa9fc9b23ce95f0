package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ShutdownTimeout bounds a service's graceful stop: in-flight requests get
// this long to finish, then queued spans get as long again to be flushed.
const ShutdownTimeout = 5 * time.Second

// serve runs h on addr until ctx is done, calling ready once the listener is
// open, and then shuts the server down gracefully within ShutdownTimeout.
// A stop by ctx is not an error.
func serve(ctx context.Context, addr string, h http.Handler, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shut down server on %s: %w", ln.Addr(), err)
	}
	return nil
}

// shutdownTracing flushes t within ShutdownTimeout, whatever the state of
// ctx.
func shutdownTracing(ctx context.Context, t *tracing) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	return t.shutdown(sctx)
}

// health answers readiness probes.
func health(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusOK)
}

// answer is the JSON body the reference services reply with.
type answer struct {
	Service string  `json:"service"`
	Calls   int     `json:"calls,omitempty"`
	Result  float64 `json:"result"`
}

// writeJSON writes a as a 200 JSON answer.
func writeJSON(w http.ResponseWriter, a answer) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(a) // a write error means the client has gone
}
