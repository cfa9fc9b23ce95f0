package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tollperf/toll/app"
	"github.com/tollperf/toll/sink"
)

// newAppCmd returns `toll app`, the built-in reference services: the
// topology of the SkyWalking Go agent benchmark, load → consumer → provider
// ×3, with an OpenTelemetry-instrumented variant and calibration knobs.
func newAppCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "app",
		Short: "Run a built-in reference service (consumer → provider ×3)",
		Long: `The reference services reproduce the SkyWalking Go agent benchmark's topology:
the load hits the consumer, which burns CPU (a math.Log loop) and calls the
provider 3 times in sequence. With --trace otel a service is instrumented with
the OpenTelemetry Go SDK (otelhttp server and client spans, W3C trace context,
batch span processor) and exports over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT
or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.

The --extra-* knobs add a known cost per request, to check toll against a known
answer: --extra-cpu burns CPU time measured on a CPU time clock: the process's
when GOMAXPROCS is 1 (a service pinned to one CPU), so that the Go runtime's own
threads running beside the burn count in it, and the thread's otherwise.
--background-cpu burns CPU every 100 ms whether the service is loaded or not,
as an agent's exporter or profiler does on its timers.`,
	}
	cmd.AddCommand(newAppProviderCmd(), newAppConsumerCmd(), newAppCollectorCmd())
	return cmd
}

// newAppProviderCmd returns `toll app provider`.
func newAppProviderCmd() *cobra.Command {
	cfg := app.ProviderConfig{Trace: app.TraceNone}
	cmd := &cobra.Command{
		Use:   "provider [flags]",
		Short: "Serve GET /provider (and GET /health)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runApp(cmd, "provider", func(ctx context.Context, ready func(net.Addr)) error {
				return app.RunProvider(ctx, cfg, ready)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", "127.0.0.1:8081", "address to listen on")
	f.StringVar(&cfg.ServiceName, "service-name", "provider", "OpenTelemetry service.name (OTEL_SERVICE_NAME overrides it)")
	addServiceFlags(f, &cfg.Burn, &cfg.Trace, 5000)
	return cmd
}

// newAppConsumerCmd returns `toll app consumer`.
func newAppConsumerCmd() *cobra.Command {
	cfg := app.ConsumerConfig{Trace: app.TraceNone}
	cmd := &cobra.Command{
		Use:   "consumer [flags]",
		Short: "Serve GET /consumer, which calls the provider --calls times (and GET /health)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runApp(cmd, "consumer", func(ctx context.Context, ready func(net.Addr)) error {
				return app.RunConsumer(ctx, cfg, ready)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	f.StringVar(&cfg.Provider, "provider", "http://127.0.0.1:8081/provider", "provider URL to call")
	f.IntVar(&cfg.Calls, "calls", 3, "provider calls per request, made one after the other")
	f.StringVar(&cfg.ServiceName, "service-name", "consumer", "OpenTelemetry service.name (OTEL_SERVICE_NAME overrides it)")
	addServiceFlags(f, &cfg.Burn, &cfg.Trace, 20000)
	return cmd
}

// addServiceFlags adds the flags both reference services share.
func addServiceFlags(f *pflag.FlagSet, b *app.Burn, trace *app.TraceMode, work int) {
	f.IntVar(&b.Work, "work", work, "math.Log iterations per request")
	f.Var(trace, "trace", "instrumentation: none or otel")
	f.DurationVar(&b.ExtraCPU, "extra-cpu", 0, "extra CPU time to burn per request (CPU time clock), e.g. 500us")
	f.DurationVar(&b.ExtraDelay, "extra-delay", 0, "extra time to sleep per request, e.g. 2ms")
	f.Var(&b.ExtraAlloc, "extra-alloc", "extra bytes to allocate and touch per request, e.g. 64KiB")
	f.DurationVar(&b.BackgroundCPU, "background-cpu", 0, "CPU time to burn per second in the background, loaded or not (an agent's timers: exporter, profiler), e.g. 20ms")
}

// runApp runs a reference service until SIGINT or SIGTERM, telling stderr
// where it listens.
func runApp(cmd *cobra.Command, name string, run func(context.Context, func(net.Addr)) error) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ready := func(a net.Addr) {
		fmt.Fprintf(cmd.ErrOrStderr(), "toll app %s: listening on %s\n", name, a)
	}
	if err := run(ctx, ready); err != nil {
		return &exitError{ExitFailure, err}
	}
	return nil
}

// newAppCollectorCmd returns `toll app collector`: an agent daemon for
// scenarios, a real OTLP (HTTP and gRPC) and Zipkin receiver in its own process (toll's
// sink), to which a traced service exports instead of to toll, so its cost
// is the daemon's (role: agent) and shows in rows of its own.
func newAppCollectorCmd() *cobra.Command {
	var addr, metricsAddr string
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "collector [flags]",
		Short: "Receive OTLP (HTTP and gRPC) and Zipkin telemetry and count it: an agent daemon to measure",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			sk := sink.New()
			if err := sk.Start(addr); err != nil {
				return &exitError{ExitFailure, fmt.Errorf("collector: %w", err)}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "toll app collector: listening on %s\n", sk.URL())
			if metricsAddr != "" {
				stopMetrics, err := serveCollectorMetrics(metricsAddr, sk)
				if err != nil {
					sk.Close(context.Background())
					return &exitError{ExitFailure, fmt.Errorf("collector: metrics: %w", err)}
				}
				defer stopMetrics()
				fmt.Fprintf(cmd.ErrOrStderr(), "toll app collector: metrics on http://%s/metrics\n", metricsAddr)
			}
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					c := sk.Counts()
					fmt.Fprintf(cmd.ErrOrStderr(), "toll app collector: %d requests, %d bytes, %d spans, %d rejected\n", c.Requests, c.Bytes, c.Spans, c.Rejected)
					sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					defer cancel()
					return sk.Close(sctx)
				case <-tick.C:
					c := sk.Counts()
					fmt.Fprintf(cmd.ErrOrStderr(), "toll app collector: %d requests, %d spans\n", c.Requests, c.Spans)
				}
			}
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4318", "address to listen on")
	cmd.Flags().DurationVar(&every, "log-every", 10*time.Second, "how often to log the counts")
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", "", "also serve the collector's own metrics in the Prometheus text format at http://ADDR/metrics, as a real Collector does on :8888 (toll_collector_accepted_spans_total, ..., and the Go runtime's)")
	return cmd
}

// serveCollectorMetrics serves the collector's counts and its Go runtime's
// metrics on addr with the Prometheus client library, as an agent that
// exposes its own metrics does (scrape: in a scenario). It returns a
// function that stops the server.
func serveCollectorMetrics(addr string, sk *sink.Sink) (stop func(), err error) {
	reg := prometheus.NewRegistry()
	counter := func(name, help string, v func(sink.Counts) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v(sk.Counts())) })
	}
	for _, c := range []prometheus.Collector{
		counter("toll_collector_requests_total", "HTTP and gRPC requests received.", func(c sink.Counts) uint64 { return c.Requests }),
		counter("toll_collector_accepted_spans_total", "Spans accepted.", func(c sink.Counts) uint64 { return c.Spans }),
		counter("toll_collector_received_bytes_total", "Request body bytes accepted, as sent.", func(c sink.Counts) uint64 { return c.Bytes }),
		counter("toll_collector_rejected_total", "Requests refused.", func(c sink.Counts) uint64 { return c.Rejected }),
		collectors.NewGoCollector(),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return func() { srv.Close() }, nil
}
