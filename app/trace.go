package app

import (
	"context"
	"fmt"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// TraceMode says how a reference service is instrumented. It implements the
// flag.Value (and pflag.Value) interface.
type TraceMode string

// Trace modes.
const (
	// TraceNone runs the service without any instrumentation: the baseline.
	TraceNone TraceMode = "none"
	// TraceOTel instruments the service with the OpenTelemetry Go SDK and
	// exports its spans over OTLP/HTTP.
	TraceOTel TraceMode = "otel"
)

// ParseTraceMode parses "none" or "otel".
func ParseTraceMode(s string) (TraceMode, error) {
	switch m := TraceMode(s); m {
	case TraceNone, TraceOTel:
		return m, nil
	}
	return "", fmt.Errorf("trace mode %q is not one of none, otel", s)
}

// String returns m as written on the command line.
func (m TraceMode) String() string { return string(m) }

// Set parses s into m.
func (m *TraceMode) Set(s string) error {
	v, err := ParseTraceMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type names the flag type in help text.
func (m *TraceMode) Type() string { return "none|otel" }

// tracing instruments a service's HTTP server and client. Its zero value
// instruments nothing.
type tracing struct {
	tp   *sdktrace.TracerProvider
	opts []otelhttp.Option
}

// newTracing sets up mode for a service named service. For TraceOTel the
// exporter reads its endpoint, headers and timeout from the standard
// OTEL_EXPORTER_OTLP_* environment, and OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES, when set, override service as the OpenTelemetry
// specification says.
func newTracing(ctx context.Context, mode TraceMode, service string) (*tracing, error) {
	switch mode {
	case TraceNone, "":
		return &tracing{}, nil
	case TraceOTel:
	default:
		return nil, fmt.Errorf("trace mode %q is not one of none, otel", mode)
	}
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName(service)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("build OpenTelemetry resource: %w", err)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("create OTLP/HTTP trace exporter: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
	)
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	return &tracing{
		tp: tp,
		opts: []otelhttp.Option{
			otelhttp.WithTracerProvider(tp),
			otelhttp.WithPropagators(prop),
			// Spans only: the variant measures tracing, not HTTP metrics.
			otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		},
	}, nil
}

// handler wraps h in a server span when tracing is on.
func (t *tracing) handler(h http.Handler, operation string) http.Handler {
	if t.tp == nil {
		return h
	}
	return otelhttp.NewHandler(h, operation, t.opts...)
}

// transport wraps rt in client spans and context injection when tracing is
// on.
func (t *tracing) transport(rt http.RoundTripper) http.RoundTripper {
	if t.tp == nil {
		return rt
	}
	return otelhttp.NewTransport(rt, t.opts...)
}

// shutdown flushes the spans still queued and stops the exporter, giving up
// when ctx is done.
func (t *tracing) shutdown(ctx context.Context) error {
	if t.tp == nil {
		return nil
	}
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush and shut down tracer provider: %w", err)
	}
	return nil
}
