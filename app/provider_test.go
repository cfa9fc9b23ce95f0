package app_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/tollperf/toll/app"
)

func TestProviderAnswers(t *testing.T) {
	cfg := app.ProviderConfig{Addr: "127.0.0.1:0", Burn: app.Burn{Work: 1000}}
	base, _ := start(t, func(ctx context.Context, ready func(net.Addr)) error {
		return app.RunProvider(ctx, cfg, ready)
	})
	tests := []struct {
		method, path string
		want         int
		wantService  string
	}{
		{http.MethodGet, "/provider", http.StatusOK, "provider"},
		{http.MethodGet, "/health", http.StatusOK, ""},
		{http.MethodPost, "/provider", http.StatusMethodNotAllowed, ""},
		{http.MethodGet, "/consumer", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, base+tt.path, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.wantService == "" {
				return
			}
			var a struct {
				Service string  `json:"service"`
				Result  float64 `json:"result"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
				t.Fatalf("decode answer: %v", err)
			}
			if a.Service != tt.wantService || a.Result <= 0 {
				t.Errorf("answer %+v, want service %q and a positive result", a, tt.wantService)
			}
		})
	}
}

func TestProviderStartErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		cfg  app.ProviderConfig
		want string
	}{
		{"address in use", app.ProviderConfig{Addr: busy.Addr().String()}, "listen"},
		{"negative work", app.ProviderConfig{Addr: "127.0.0.1:0", Burn: app.Burn{Work: -1}}, "work -1 is negative"},
		{"unknown trace mode", app.ProviderConfig{Addr: "127.0.0.1:0", Trace: "zipkin"}, `trace mode "zipkin"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := app.RunProvider(context.Background(), tt.cfg, func(net.Addr) {
				t.Error("ready called")
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("RunProvider = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
