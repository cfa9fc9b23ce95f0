package app_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/tollperf/toll/app"
)

// span is what the tests check of an exported span.
type span struct {
	service         string
	kind            ptrace.SpanKind
	trace           pcommon.TraceID
	id, parent      pcommon.SpanID
	traceparentWant string // the traceparent header a child of this span receives
}

// receiver is a minimal OTLP/HTTP protobuf trace receiver.
type receiver struct {
	mu    sync.Mutex
	spans []span
}

// newReceiver starts a receiver on 127.0.0.1 and returns it with its URL.
func newReceiver(t *testing.T) (*receiver, string) {
	t.Helper()
	rc := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(rc.serveHTTP))
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

func (rc *receiver) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want OTLP/HTTP protobuf on /v1/traces", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []span
	rss := req.Traces().ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		service, _ := rs.Resource().Attributes().Get("service.name")
		sss := rs.ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				s := spans.At(k)
				got = append(got, span{
					service: service.Str(), kind: s.Kind(),
					trace: s.TraceID(), id: s.SpanID(), parent: s.ParentSpanID(),
					traceparentWant: fmt.Sprintf("00-%s-%s-01", s.TraceID(), s.SpanID()),
				})
			}
		}
	}
	rc.mu.Lock()
	rc.spans = append(rc.spans, got...)
	rc.mu.Unlock()
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

// received returns the spans received so far.
func (rc *receiver) received() []span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]span(nil), rc.spans...)
}

// setOTelEnv points the OTLP exporter at url through one of the two
// standard variables and clears the others a developer's shell might set.
func setOTelEnv(t *testing.T, variable, url string) {
	for _, v := range []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "OTEL_SDK_DISABLED",
	} {
		t.Setenv(v, "")
	}
	if variable == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" {
		url += "/v1/traces"
	}
	t.Setenv(variable, url)
}

func TestConsumerTracing(t *testing.T) {
	const requests, calls = 20, 3
	tests := []struct {
		name, envVar string
		mode         app.TraceMode
		wantSpans    int
	}{
		{"none", "OTEL_EXPORTER_OTLP_ENDPOINT", app.TraceNone, 0},
		{"otel via OTLP endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", app.TraceOTel, requests * (1 + calls)},
		{"otel via traces endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", app.TraceOTel, requests * (1 + calls)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, url := newReceiver(t)
			setOTelEnv(t, tt.envVar, url)
			var mu sync.Mutex
			var traceparents []string
			provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				traceparents = append(traceparents, r.Header.Get("traceparent"))
				mu.Unlock()
				w.Write([]byte(`{"service":"provider"}`))
			}))
			defer provider.Close()
			cfg := app.ConsumerConfig{
				Addr: "127.0.0.1:0", Provider: provider.URL + "/provider", Calls: calls,
				Trace: tt.mode, Burn: app.Burn{Work: 100},
			}
			base, stop := start(t, func(ctx context.Context, ready func(net.Addr)) error {
				return app.RunConsumer(ctx, cfg, ready)
			})
			for range requests {
				if code, body := get(t, base+"/consumer", nil); code != http.StatusOK {
					t.Fatalf("status %d: %s", code, body)
				}
			}
			if err := stop(); err != nil { // flushes the spans
				t.Fatalf("stop consumer: %v", err)
			}

			spans := rc.received()
			if len(spans) != tt.wantSpans {
				t.Fatalf("received %d spans for %d requests, want %d", len(spans), requests, tt.wantSpans)
			}
			if len(traceparents) != requests*calls {
				t.Fatalf("provider called %d times, want %d", len(traceparents), requests*calls)
			}
			if tt.mode == app.TraceNone {
				for _, tp := range traceparents {
					if tp != "" {
						t.Fatalf("uninstrumented consumer sent traceparent %q", tp)
					}
				}
				return
			}
			checkConsumerTraces(t, spans, traceparents, requests, calls)
		})
	}
}

// checkConsumerTraces checks that each request made one trace of one server
// span and calls client spans under it, and that the provider received each
// client span's context.
func checkConsumerTraces(t *testing.T, spans []span, traceparents []string, requests, calls int) {
	t.Helper()
	servers := map[pcommon.TraceID]span{}
	clients := map[pcommon.TraceID][]span{}
	for _, s := range spans {
		if s.service != "consumer" {
			t.Errorf("span of service %q, want consumer", s.service)
		}
		switch s.kind {
		case ptrace.SpanKindServer:
			if _, dup := servers[s.trace]; dup {
				t.Errorf("two server spans in trace %s", s.trace)
			}
			servers[s.trace] = s
		case ptrace.SpanKindClient:
			clients[s.trace] = append(clients[s.trace], s)
		default:
			t.Errorf("span of kind %v", s.kind)
		}
	}
	if len(servers) != requests {
		t.Errorf("%d traces with a server span, want %d", len(servers), requests)
	}
	want := map[string]bool{}
	for tr, cs := range clients {
		server, ok := servers[tr]
		if !ok {
			t.Errorf("client spans of trace %s have no server span in their trace", tr)
			continue
		}
		if len(cs) != calls {
			t.Errorf("trace %s has %d client spans, want %d", tr, len(cs), calls)
		}
		for _, c := range cs {
			if c.parent != server.id {
				t.Errorf("client span %s has parent %s, want the server span %s", c.id, c.parent, server.id)
			}
			want[c.traceparentWant] = true
		}
	}
	for _, tp := range traceparents {
		if !want[tp] {
			t.Errorf("provider received traceparent %q, not the context of any client span", tp)
		}
		delete(want, tp)
	}
}

func TestProviderTracing(t *testing.T) {
	const requests = 10
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		name, serviceEnv, wantService string
	}{
		{"service name from config", "", "provider"},
		{"service name from OTEL_SERVICE_NAME", "inventory", "inventory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, url := newReceiver(t)
			setOTelEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT", url)
			t.Setenv("OTEL_SERVICE_NAME", tt.serviceEnv)
			cfg := app.ProviderConfig{Addr: "127.0.0.1:0", Trace: app.TraceOTel, Burn: app.Burn{Work: 100}}
			base, stop := start(t, func(ctx context.Context, ready func(net.Addr)) error {
				return app.RunProvider(ctx, cfg, ready)
			})
			parents := map[string]bool{}
			for i := range requests {
				parent := fmt.Sprintf("%016x", 0xabc000+i)
				parents[parent] = true
				h := http.Header{"Traceparent": {"00-" + traceID + "-" + parent + "-01"}}
				if code, body := get(t, base+"/provider", h); code != http.StatusOK {
					t.Fatalf("status %d: %s", code, body)
				}
			}
			if code, _ := get(t, base+"/health", nil); code != http.StatusOK {
				t.Fatalf("health status %d", code)
			}
			if err := stop(); err != nil {
				t.Fatalf("stop provider: %v", err)
			}
			spans := rc.received()
			if len(spans) != requests {
				t.Fatalf("received %d spans for %d requests (and a health check), want %d", len(spans), requests, requests)
			}
			for _, s := range spans {
				if s.service != tt.wantService || s.kind != ptrace.SpanKindServer || s.trace.String() != traceID || !parents[s.parent.String()] {
					t.Errorf("span service %q kind %v trace %s parent %s, want a %s server span in trace %s under one of the parents sent",
						s.service, s.kind, s.trace, s.parent, tt.wantService, traceID)
				}
				delete(parents, s.parent.String())
			}
			if len(parents) != 0 {
				t.Errorf("no span for parents %v", strings.Join(keys(parents), ", "))
			}
		})
	}
}

// keys returns the keys of m.
func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
