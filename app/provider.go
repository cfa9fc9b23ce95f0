package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// ProviderConfig configures the provider service.
type ProviderConfig struct {
	// Addr is the TCP address to listen on, e.g. "127.0.0.1:8081".
	Addr string
	// Burn is what each GET /provider costs.
	Burn Burn
	// Trace says whether the provider is instrumented.
	Trace TraceMode
	// ServiceName is the OpenTelemetry service.name; "provider" if empty.
	ServiceName string
}

// RunProvider serves GET /provider and GET /health on cfg.Addr until ctx is
// done, calling ready (if not nil) with the listening address once requests
// can be served. It then stops gracefully and flushes the spans still
// queued, each within ShutdownTimeout. A stop by ctx returns nil.
func RunProvider(ctx context.Context, cfg ProviderConfig, ready func(net.Addr)) error {
	if err := cfg.Burn.Validate(); err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = "provider"
	}
	tr, err := newTracing(ctx, cfg.Trace, cfg.ServiceName)
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /provider", tr.handler(&provider{burn: cfg.Burn}, "provider"))
	mux.HandleFunc("GET /health", health)
	go cfg.Burn.Background(ctx)
	err = serve(ctx, cfg.Addr, mux, ready)
	if terr := shutdownTracing(ctx, tr); terr != nil {
		err = errors.Join(err, terr)
	}
	if err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	return nil
}

// provider answers GET /provider.
type provider struct {
	burn Burn
}

func (p *provider) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, answer{Service: "provider", Result: p.burn.Do()})
}
