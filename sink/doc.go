// Package sink is toll's telemetry sink: a real receiver that the agents
// under test export to, which counts what it received so that toll can
// report the telemetry each variant produced (spans/s, export bytes/s) and
// flag a variant whose agent exported nothing.
//
// One HTTP listener serves:
//
//   - POST /v1/traces, /v1/metrics, /v1/logs: OTLP/HTTP with
//     Content-Type application/x-protobuf or application/json and optional
//     Content-Encoding gzip. Payloads are decoded with OpenTelemetry's own
//     pdata types (ptraceotlp, pmetricotlp, plogotlp), so a payload the
//     Collector would reject is rejected here too. The reply is 200 with an
//     empty ExportResponse in the request's encoding; a payload that does
//     not decode gets 400 with a google.rpc.Status body, as the OTLP
//     specification says.
//   - POST /api/v2/spans: Zipkin v2 JSON (an array of span objects),
//     optionally gzip-compressed. The reply is 202.
//
// Anything else is answered 404 (unknown path) or 405 (known path, wrong
// method). Request bodies are limited to MaxBodyBytes as sent and
// MaxDecodedBytes once decompressed; larger ones get 413.
//
// Counts are cumulative since Start and kept in atomics, so reading them
// (Sink.Counts) and counting on the request path take no locks. Requests
// and Bytes count every request the listener received, whatever its path or
// outcome; Rejected counts those answered with an error status; Spans,
// MetricPoints and LogRecords count only what was accepted.
package sink
