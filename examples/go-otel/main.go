// Command consumer is an HTTP service for following the OpenTelemetry Go
// SDK over its releases: GET /consumer burns a fixed number of math.Log
// iterations and, with --trace otel, is traced by the SDK of the version it
// was built with (build.sh): a server span and a child span per request,
// with the attributes an HTTP instrumentation sets, batched and exported
// over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT. It uses only the API that
// every release since v1.0.0 has, so one source builds with each.
//
// Built with the otellogs tag (build.sh VERSION logs: releases from 1.27.0,
// whose log SDK ships beside them), --logs otel also writes one log record
// per request, an access log line tied to the request's span, through the
// SDK's logs, batched over OTLP/HTTP to the same endpoint.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	work := flag.Int("work", 20000, "math.Log iterations a request")
	mode := flag.String("trace", "none", "none, or otel: trace every request with the OpenTelemetry Go SDK")
	logs := flag.String("logs", "none", "none, or otel: log every request through the SDK's logs (a build with the otellogs tag)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr, *work, *mode, *logs); err != nil {
		log.Fatal(err)
	}
}

// serve answers on addr until ctx is done.
func serve(ctx context.Context, addr string, work int, mode, logs string) error {
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%.3f\n", burn(work))
	})
	switch logs {
	case "none":
	case "otel":
		h, shutdown, err := logged(ctx, handler)
		if err != nil {
			return err
		}
		defer shutdown()
		handler = h
	default:
		return fmt.Errorf("--logs %q: want none or otel", logs)
	}
	switch mode {
	case "none":
	case "otel":
		tp, err := tracerProvider(ctx)
		if err != nil {
			return err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			tp.Shutdown(sctx)
		}()
		handler = traced(tp.Tracer("consumer"), handler)
	default:
		return fmt.Errorf("--trace %q: want none or otel", mode)
	}
	mux := http.NewServeMux()
	mux.Handle("/consumer", handler)
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// tracerProvider returns the SDK's tracer provider, batching spans to the
// OTLP/HTTP endpoint in OTEL_EXPORTER_OTLP_ENDPOINT (read here: the
// exporter of early releases does not read it).
func tracerProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	host, insecure, err := otlpEndpoint()
	if err != nil {
		return nil, err
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(host)}
	if insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(serviceResource()))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return tp, nil
}

// otlpEndpoint returns the host and port of OTEL_EXPORTER_OTLP_ENDPOINT, and
// whether it is plain HTTP.
func otlpEndpoint() (host string, insecure bool, err error) {
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", false, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT %q: want a URL such as http://127.0.0.1:4318", endpoint)
	}
	return u.Host, u.Scheme == "http", nil
}

// serviceResource names the service as OTEL_SERVICE_NAME says (consumer by
// default).
func serviceResource() *resource.Resource {
	name := os.Getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "consumer"
	}
	return resource.NewSchemaless(attribute.String("service.name", name))
}

// traced wraps next in a server span, with a child span around its work,
// as an HTTP instrumentation and a handler's own span would.
func traced(tracer trace.Tracer, next http.Handler) http.Handler {
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, r.Method+" "+r.URL.Path, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.method", r.Method), attribute.String("http.target", r.URL.Path),
				attribute.String("http.scheme", "http"), attribute.String("net.host.name", r.Host),
				attribute.String("http.user_agent", r.UserAgent())))
		defer span.End()
		_, work := tracer.Start(ctx, "work")
		next.ServeHTTP(w, r.WithContext(ctx))
		work.End()
		span.SetAttributes(attribute.Int("http.status_code", http.StatusOK))
	})
}

// burn returns the sum of math.Log over 1..n: n iterations of CPU work.
func burn(n int) float64 {
	s := 0.0
	for i := 1; i <= n; i++ {
		s += math.Log(float64(i))
	}
	return s
}
