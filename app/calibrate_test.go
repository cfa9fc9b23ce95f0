package app_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/tollperf/toll/app"
)

// TestExtraCPUPerRequest checks the calibration knob end to end: a provider
// with --extra-cpu D costs the process about D more CPU per request than
// the same provider without it.
func TestExtraCPUPerRequest(t *testing.T) {
	const requests, extra = 200, 2 * time.Millisecond
	cpuPerRun := func(b app.Burn) time.Duration {
		cfg := app.ProviderConfig{Addr: "127.0.0.1:0", Burn: b}
		base, stop := start(t, func(ctx context.Context, ready func(net.Addr)) error {
			return app.RunProvider(ctx, cfg, ready)
		})
		defer stop()
		for range 10 { // warm up the connection and the handler
			get(t, base+"/provider", nil)
		}
		before := processCPU(t)
		for range requests {
			if code, body := get(t, base+"/provider", nil); code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
		}
		return processCPU(t) - before
	}
	baseline := cpuPerRun(app.Burn{Work: 100})
	loaded := cpuPerRun(app.Burn{Work: 100, ExtraCPU: extra})
	added, want := loaded-baseline, requests*extra
	t.Logf("baseline %v, with extra CPU %v: added %v for %d requests (want %v)", baseline, loaded, added, requests, want)
	if added < want*7/10 || added > want*2 {
		t.Errorf("extra CPU %v × %d requests added %v of CPU, want between 0.7× and 2× of %v", extra, requests, added, want)
	}
}
