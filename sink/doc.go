// Package sink is toll's telemetry sink: a real receiver that the agents
// under test export to, which counts what it received so that toll can
// report the telemetry each variant produced (spans/s, export bytes/s,
// profiles/s) and flag a variant whose agent exported nothing.
//
// One HTTP listener speaks the export protocol of each agent toll runs, so
// that a scenario points any of them at the same base URL (${sink}):
//
//   - OTLP/HTTP (sink/otlp.go): POST /v1/traces, /v1/metrics, /v1/logs
//     with Content-Type application/x-protobuf or application/json.
//     Payloads are decoded with OpenTelemetry's own pdata types
//     (ptraceotlp, pmetricotlp, plogotlp), so a payload the Collector would
//     reject is rejected here too. The reply is 200 with an empty
//     ExportResponse in the request's encoding; a payload that does not
//     decode gets 400 with a google.rpc.Status body, as the OTLP
//     specification says.
//   - OTLP/gRPC (sink/grpc.go): the OTLP trace, metrics and logs services
//     on the same port, over HTTP/2 without TLS (prior knowledge, as gRPC
//     exporters connect to an http:// endpoint), served by grpc-go with
//     pdata's service registrations. Messages above MaxGRPCMessageBytes
//     get RESOURCE_EXHAUSTED.
//   - Zipkin v2 (sink/zipkin.go): POST /api/v2/spans, a JSON array of
//     span objects. The reply is 202.
//   - Elastic APM (sink/elastic.go): POST /intake/v2/events, the intake v2
//     NDJSON stream (a metadata line, then transactions, spans, errors,
//     metricsets and logs). Transactions and spans count as spans (both are
//     spans in OpenTelemetry terms), metricset samples as metric points,
//     errors and logs as log records. The reply is 202. GET / (server
//     information) and GET or POST /config/v1/agents (central
//     configuration, answered as a server with none set) are served too, so
//     an agent runs as it would against an APM Server.
//   - Datadog (sink/datadog.go): PUT /v0.4/traces and /v0.5/traces,
//     msgpack, whose spans are counted; the reply is 200 with sampling
//     rates. GET /info (agent discovery, with the Datadog-Agent-State hash),
//     PUT or POST /v0.6/stats (client-computed stats) and POST
//     /telemetry/proxy/... (the tracer's own telemetry) are accepted and
//     not counted.
//   - Pyroscope (sink/pyroscope.go): POST /ingest with a JFR, pprof or
//     folded profile, plain or multipart; each accepted request is one
//     profile. The reply is 200.
//
// Request bodies may be gzip- or deflate-compressed (Content-Encoding).
// Anything else is answered 404 (unknown path) or 405 (known path, wrong
// method).
//
// The sink runs in toll's own process, so what it holds is bounded
// (sink/limits.go): request bodies are limited to MaxBodyBytes as sent
// (a larger Content-Length is refused before the body is read) and
// MaxDecodedBytes once decompressed (counted before anything is kept), and
// larger ones get 413; at most MaxDecodes requests are decoded at once and
// the requests in flight hold at most MemoryBudget bytes, so that others
// wait up to DecodeWait and then get 503 with Retry-After; an OTLP
// payload is charged what pdata will hold of it before it is decoded; a
// body that sends nothing for StallTimeout is dropped; and at most
// MaxConns connections are served at once, from PressureConns of them
// on with new connections' bodies held to PressedBodyRate (pressure.go).
//
// Counts are cumulative since Start and kept in atomics, so reading them
// (Sink.Counts) and counting on the request path take no locks. Requests
// counts every request the listener received, whatever its path or
// outcome, including an agent's discovery and configuration calls;
// Rejected counts those answered with an error status, and RejectedBytes
// their body bytes; Bytes counts the body bytes of the others. Spans,
// MetricPoints, LogRecords and Profiles count only what was accepted.
package sink
