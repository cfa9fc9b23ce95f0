package app_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tollperf/toll/app"
)

func TestConsumerCallsProvider(t *testing.T) {
	const requests = 10
	for _, calls := range []int{0, 1, 3} {
		t.Run("calls="+strconv.Itoa(calls), func(t *testing.T) {
			var hits atomic.Int64
			provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Write([]byte(`{"service":"provider"}`))
			}))
			defer provider.Close()
			cfg := app.ConsumerConfig{
				Addr: "127.0.0.1:0", Provider: provider.URL + "/provider", Calls: calls,
				Burn: app.Burn{Work: 100},
			}
			base, _ := start(t, func(ctx context.Context, ready func(net.Addr)) error {
				return app.RunConsumer(ctx, cfg, ready)
			})
			for range requests {
				code, body := get(t, base+"/consumer", nil)
				if code != http.StatusOK {
					t.Fatalf("status %d: %s", code, body)
				}
				var a struct {
					Service string `json:"service"`
					Calls   int    `json:"calls"`
				}
				if err := json.Unmarshal(body, &a); err != nil || a.Service != "consumer" || a.Calls != calls {
					t.Fatalf("answer %s (%v), want service consumer and %d calls", body, err, calls)
				}
			}
			if got, want := hits.Load(), int64(requests*calls); got != want {
				t.Errorf("provider called %d times for %d requests, want %d", got, requests, want)
			}
		})
	}
}

func TestConsumerProviderFailure(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer failing.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + closed.Addr().String() + "/provider"
	closed.Close()

	tests := []struct {
		name, provider, want string
	}{
		{"provider answers 500", failing.URL, "500"},
		{"provider down", down, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := app.ConsumerConfig{Addr: "127.0.0.1:0", Provider: tt.provider, Calls: 3}
			base, _ := start(t, func(ctx context.Context, ready func(net.Addr)) error {
				return app.RunConsumer(ctx, cfg, ready)
			})
			code, body := get(t, base+"/consumer", nil)
			if code != http.StatusBadGateway || !strings.Contains(string(body), tt.want) {
				t.Errorf("status %d body %q, want 502 mentioning %q", code, body, tt.want)
			}
			if code, _ := get(t, base+"/health", nil); code != http.StatusOK {
				t.Errorf("health status %d, want 200", code)
			}
		})
	}
}

func TestConsumerConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  app.ConsumerConfig
		want string
	}{
		{"relative provider URL", app.ConsumerConfig{Provider: "/provider", Calls: 3}, "not an absolute http(s) URL"},
		{"no provider", app.ConsumerConfig{Calls: 3}, "not an absolute http(s) URL"},
		{"negative calls", app.ConsumerConfig{Provider: "http://127.0.0.1:1/p", Calls: -1}, "calls -1 is negative"},
		{"negative delay", app.ConsumerConfig{Provider: "http://127.0.0.1:1/p", Burn: app.Burn{ExtraDelay: -1}}, "extra delay -1ns is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Addr = "127.0.0.1:0"
			err := app.RunConsumer(context.Background(), tt.cfg, func(net.Addr) {
				t.Error("ready called")
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("RunConsumer = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
