package sink

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"
)

// grpcConn dials s over gRPC (HTTP/2 without TLS) and closes the
// connection when the test ends.
func grpcConn(t *testing.T, s *Sink) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(s.URL(), "http://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", s.URL(), err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestGRPCExporter exports spans with the OpenTelemetry Go SDK's gRPC
// exporter, pointed at the sink's URL as it is for OTLP/HTTP.
func TestGRPCExporter(t *testing.T) {
	s := startSink(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, compression := range []string{"", "gzip"} {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(s.URL())}
		if compression != "" {
			opts = append(opts, otlptracegrpc.WithCompressor(compression))
		}
		exp, err := otlptracegrpc.New(ctx, opts...)
		if err != nil {
			t.Fatalf("otlptracegrpc.New: %v", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
		tr := tp.Tracer("toll-test")
		for range 25 {
			_, span := tr.Start(ctx, "op")
			span.End()
		}
		if err := tp.Shutdown(ctx); err != nil { // flushes, or fails on an export error
			t.Fatalf("compression %q: export: %v", compression, err)
		}
	}
	c := s.Counts()
	if c.Spans != 50 || c.Requests < 2 || c.Bytes == 0 || c.Rejected != 0 || c.RejectedBytes != 0 {
		t.Errorf("Counts() = %+v, want 50 spans in ≥2 requests, >0 bytes, nothing rejected", c)
	}
}

// TestGRPCSignals exports each signal with pdata's gRPC clients.
func TestGRPCSignals(t *testing.T) {
	s := startSink(t)
	conn := grpcConn(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(testTraces(7))); err != nil {
		t.Fatalf("export traces: %v", err)
	}
	if _, err := pmetricotlp.NewGRPCClient(conn).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(testMetrics())); err != nil {
		t.Fatalf("export metrics: %v", err)
	}
	if _, err := plogotlp.NewGRPCClient(conn).Export(ctx, plogotlp.NewExportRequestFromLogs(testLogs(4))); err != nil {
		t.Fatalf("export logs: %v", err)
	}
	c := s.Counts()
	if c.Requests != 3 || c.Spans != 7 || c.MetricPoints != 5 || c.LogRecords != 4 || c.Rejected != 0 || c.Bytes == 0 {
		t.Errorf("Counts() = %+v, want 3 requests, 7 spans, 5 points, 4 records, nothing rejected", c)
	}
}

// TestGRPCOversized sends a message over the gRPC limit: it is refused with
// RESOURCE_EXHAUSTED and counted as rejected, its spans not at all.
func TestGRPCOversized(t *testing.T) {
	s := New()
	s.lim.maxGRPC = 16 << 10
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	conn := grpcConn(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := ptraceotlp.NewGRPCClient(conn)
	big := ptraceotlp.NewExportRequestFromTraces(testTraces(1000)) // about 60 KiB
	_, err := client.Export(ctx, big)
	if got := status.Code(err); got != codes.ResourceExhausted {
		t.Fatalf("oversized export: %v (code %v), want ResourceExhausted", err, got)
	}
	if _, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(testTraces(3))); err != nil {
		t.Fatalf("export after the oversized one: %v", err)
	}
	c := s.Counts()
	if c.Requests != 2 || c.Rejected != 1 || c.Spans != 3 || c.Bytes == 0 {
		t.Errorf("Counts() = %+v, want 2 requests, 1 rejected, 3 spans", c)
	}
}

// TestGRPCBusy holds the sink's only decode slot: a call is answered
// UNAVAILABLE after the decode wait, and counted as rejected.
func TestGRPCBusy(t *testing.T) {
	s := New()
	s.lim.decodes, s.lim.wait = 1, 100*time.Millisecond
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	hold := s.newLease(context.Background())
	if rerr := hold.decodeSlot(); rerr != nil {
		t.Fatal(rerr.msg)
	}
	conn := grpcConn(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := ptraceotlp.NewGRPCClient(conn)
	_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(testTraces(3)))
	if got := status.Code(err); got != codes.Unavailable {
		t.Fatalf("export while busy: %v (code %v), want Unavailable", err, got)
	}
	hold.release()
	if _, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(testTraces(3))); err != nil {
		t.Fatalf("export once free: %v", err)
	}
	if c := s.Counts(); c.Requests != 2 || c.Rejected != 1 || c.Spans != 3 || c.RejectedBytes == 0 {
		t.Errorf("Counts() = %+v, want 2 requests, 1 rejected (with its bytes), 3 spans", c)
	}
}
