package repro

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestReproductionSkyWalkingGo runs examples/reproductions/skywalking-go.yaml
// short: its paragraph's three sentences, the spans the collector received.
func TestReproductionSkyWalkingGo(t *testing.T) {
	tolltest.RunReproduction(t, tolltest.Reproduction{File: "skywalking-go.yaml", Layout: "skywalking-go",
		Short: []string{"--rounds", "2", "--warmup", "1s", "--duration", "2s"},
		Rows: []string{"In the baseline version at", "In the otel-go version at", "average response time for a single request was",
			"spans/s from otel-go", "| latency mean (ms) |", "| CPU (cores) |"}})
}

// TestReproductionKindling runs examples/reproductions/kindling.yaml short:
// both load steps side by side, the machine's, the application's and the
// bpftrace agent's own rows.
func TestReproductionKindling(t *testing.T) {
	tolltest.RunReproduction(t, tolltest.Reproduction{File: "kindling.yaml", Layout: "kindling", Root: true, Programs: []string{"bpftrace"},
		Short: []string{"--rounds", "2", "--warmup", "1s", "--duration", "2s"},
		Rows: []string{"400 req/s: baseline", "400 req/s: ebpf-agent", "2000 req/s: Δ", "| machine-cpu (%) |", "| machine-mem (%) |",
			"| application-cpu (cores) |", "| application-latency (mean, ms) |", "| application-tps (req/s) |",
			"| agent kindling cpu (cores) |", "| agent kindling rss (MiB) |"}})
}

// TestReportLayoutUnknown checks that a layout toll does not have is a
// usage error naming the ones it has, before any directory is read.
func TestReportLayoutUnknown(t *testing.T) {
	cmd := tolltest.Command(t, "report", "--layout", "vendor", t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if code := tolltest.ExitCode(cmd.Run()); code != cli.ExitUsage {
		t.Fatalf("exit %d, want %d (usage)\n%s", code, cli.ExitUsage, stderr.String())
	}
	if !strings.Contains(stderr.String(), `--layout "vendor" is not a layout (known: sermant, kindling, jetty, skywalking-go, easeagent)`) {
		t.Errorf("stderr %q does not name the layouts", stderr.String())
	}
}
