//go:build otellogs

package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// logged wraps next so that every request, once served, writes an access
// log record through the SDK's logs, in the request's context (so tied to
// its span when traced), batched and exported over OTLP/HTTP. The returned
// function flushes and stops the SDK.
func logged(ctx context.Context, next http.Handler) (http.Handler, func(), error) {
	host, insecure, err := otlpEndpoint()
	if err != nil {
		return nil, nil, err
	}
	opts := []otlploghttp.Option{otlploghttp.WithEndpoint(host)}
	if insecure {
		opts = append(opts, otlploghttp.WithInsecure())
	}
	exp, err := otlploghttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP log exporter: %w", err)
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(serviceResource()),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	logger := lp.Logger("consumer")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		var rec log.Record
		rec.SetTimestamp(start)
		rec.SetSeverity(log.SeverityInfo)
		rec.SetBody(log.StringValue("request served"))
		rec.AddAttributes(log.String("http.method", r.Method), log.String("http.target", r.URL.Path),
			log.String("http.user_agent", r.UserAgent()), log.Int("http.status_code", http.StatusOK),
			log.Int64("duration_us", time.Since(start).Microseconds()))
		logger.Emit(r.Context(), rec)
	})
	shutdown := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		lp.Shutdown(sctx)
	}
	return h, shutdown, nil
}
