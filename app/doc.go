// Package app holds toll's built-in reference services, the topology of the
// SkyWalking Go agent benchmark: load → consumer → provider ×3.
//
// The provider answers GET /provider after burning a fixed number of
// math.Log iterations. The consumer answers GET /consumer by burning its own
// iterations and then calling the provider a fixed number of times in
// sequence. Both answer GET /health for readiness.
//
// Either service can run uninstrumented (TraceNone, the baseline) or with the
// OpenTelemetry Go SDK (TraceOTel): otelhttp server spans, otelhttp client
// spans on the consumer's calls (so 1 server + 3 client spans per consumer
// request), W3C trace-context and baggage propagation, a batch span processor
// and an OTLP/HTTP protobuf exporter configured by the standard
// OTEL_EXPORTER_OTLP_* environment.
//
// Burn also has calibration knobs, so that toll can be checked against a
// known answer: extra CPU time measured on the thread CPU clock, extra sleep,
// and extra heap allocation per request.
package app
