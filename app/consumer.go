package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Provider client settings: keep-alive connections, with an idle pool big
// enough that a high request rate never falls back to new connections.
const (
	maxIdleConnsPerHost = 1024
	dialTimeout         = 5 * time.Second
	callTimeout         = 10 * time.Second
)

// ConsumerConfig configures the consumer service.
type ConsumerConfig struct {
	// Addr is the TCP address to listen on, e.g. "127.0.0.1:8080".
	Addr string
	// Provider is the URL each call fetches, e.g.
	// "http://127.0.0.1:8081/provider".
	Provider string
	// Calls is how many times each GET /consumer calls Provider, one after
	// the other (3 in the SkyWalking Go benchmark).
	Calls int
	// Burn is what each GET /consumer costs before it calls the provider.
	Burn Burn
	// Trace says whether the consumer is instrumented.
	Trace TraceMode
	// ServiceName is the OpenTelemetry service.name; "consumer" if empty.
	ServiceName string
}

// validate reports what is wrong with c.
func (c ConsumerConfig) validate() error {
	errs := []error{c.Burn.Validate()}
	if c.Calls < 0 {
		errs = append(errs, fmt.Errorf("calls %d is negative", c.Calls))
	}
	if u, err := url.Parse(c.Provider); err != nil {
		errs = append(errs, fmt.Errorf("provider URL: %w", err))
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("provider URL %q is not an absolute http(s) URL", c.Provider))
	}
	return errors.Join(errs...)
}

// RunConsumer serves GET /consumer and GET /health on cfg.Addr until ctx is
// done, calling ready (if not nil) with the listening address once requests
// can be served. Each GET /consumer burns cfg.Burn, then calls cfg.Provider
// cfg.Calls times in sequence, and answers 502 if a call fails. When ctx is
// done it stops gracefully and flushes the spans still queued, each within
// ShutdownTimeout. A stop by ctx returns nil.
func RunConsumer(ctx context.Context, cfg ConsumerConfig, ready func(net.Addr)) error {
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = "consumer"
	}
	tr, err := newTracing(ctx, cfg.Trace, cfg.ServiceName)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	base := newProviderTransport()
	defer base.CloseIdleConnections()
	c := &consumer{
		burn:     cfg.Burn,
		provider: cfg.Provider,
		calls:    cfg.Calls,
		client:   &http.Client{Transport: tr.transport(base), Timeout: callTimeout},
	}
	mux := http.NewServeMux()
	mux.Handle("GET /consumer", tr.handler(c, "consumer"))
	mux.HandleFunc("GET /health", health)
	go cfg.Burn.Background(ctx)
	err = serve(ctx, cfg.Addr, mux, ready)
	if terr := shutdownTracing(ctx, tr); terr != nil {
		err = errors.Join(err, terr)
	}
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	return nil
}

// newProviderTransport returns the keep-alive transport the consumer calls
// the provider with. It ignores proxy settings in the environment.
func newProviderTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0, // no limit beyond the per-host one
		MaxIdleConnsPerHost: maxIdleConnsPerHost,
		IdleConnTimeout:     90 * time.Second,
	}
}

// consumer answers GET /consumer.
type consumer struct {
	burn     Burn
	provider string
	calls    int
	client   *http.Client
}

func (c *consumer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	result := c.burn.Do()
	for i := range c.calls {
		if err := c.call(r.Context()); err != nil {
			http.Error(w, fmt.Sprintf("call %d of %d to provider: %v", i+1, c.calls, err), http.StatusBadGateway)
			return
		}
	}
	writeJSON(w, answer{Service: "consumer", Calls: c.calls, Result: result})
}

// call fetches the provider URL once and reads the answer to its end, so
// that the connection goes back to the pool (and the client span ends).
func (c *consumer) call(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.provider, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("provider answered %s", resp.Status)
	}
	return nil
}
