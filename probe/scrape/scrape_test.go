package scrape

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	prom, err := os.ReadFile("testdata/prometheus-2.42.txt") // Prometheus 2.42's own /metrics
	if err != nil {
		t.Fatal(err)
	}
	const page = `# TYPE reqs_total counter
reqs_total{path="/a"} 3
reqs_total{path="/b"} 4.5
# TYPE queue gauge
queue{q="x"} 2
queue{q="y"} 5
untyped_thing 7
# TYPE lat histogram
lat_bucket{le="1"} 2
lat_bucket{le="+Inf"} 3
lat_sum 1.5
lat_count 3
`
	tests := []struct {
		name    string
		page    string
		names   []string
		want    []Metric
		wantErr bool
	}{
		{"series summed", page, []string{"reqs_total", "queue"},
			[]Metric{{"reqs_total", Counter, 7.5}, {"queue", Gauge, 7}}, false},
		{"untyped is a gauge, histogram its count", page, []string{"untyped_thing", "lat"},
			[]Metric{{"untyped_thing", Gauge, 7}, {"lat", Counter, 3}}, false},
		{"absent left out, order of names", page, []string{"nope", "queue", "reqs_total"},
			[]Metric{{"queue", Gauge, 7}, {"reqs_total", Counter, 7.5}}, false},
		{"prometheus", string(prom), []string{"go_goroutines", "process_cpu_seconds_total", "go_gc_duration_seconds", "prometheus_tsdb_compaction_chunk_range_seconds"},
			[]Metric{{"go_goroutines", Gauge, 27}, {"process_cpu_seconds_total", Counter, 0.08}, {"go_gc_duration_seconds", Counter, 3}, {"prometheus_tsdb_compaction_chunk_range_seconds", Counter, 0}}, false},
		{"malformed", "reqs_total{path=\"/a\" 3\n", []string{"reqs_total"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.page), tt.names)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Parse = %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Parse = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("Parse[%d] = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestGetPrometheus scrapes a real Prometheus server's own metrics twice:
// its count of HTTP requests served grows by toll's first scrape.
func TestGetPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("needs prometheus (scripts/install-test-deps.sh installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(cfg, []byte("global: {scrape_interval: 1h}\n"), 0o644)
	cmd := exec.Command(bin, "--config.file="+cfg, "--web.listen-address="+addr, "--storage.tsdb.path="+filepath.Join(dir, "data"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := "http://" + addr + "/metrics"
	names := []string{"promhttp_metric_handler_requests_total", "go_goroutines"}
	var first []Metric
	for {
		if first, err = Get(ctx, http.DefaultClient, url, names); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("Prometheus never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	second, err := Get(ctx, http.DefaultClient, url, names)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || len(second) != 2 {
		t.Fatalf("scrapes: %v, %v; want both metrics", first, second)
	}
	if first[0].Kind != Counter || first[1].Kind != Gauge {
		t.Errorf("kinds: %+v", first)
	}
	if d := second[0].Value - first[0].Value; d < 1 {
		t.Errorf("promhttp_metric_handler_requests_total grew by %v between two scrapes, want at least 1", d)
	}
	if first[1].Value < 1 {
		t.Errorf("go_goroutines = %v", first[1].Value)
	}
}
