package reprojvm

import (
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestReproductionJetty runs examples/reproductions/jetty.yaml short, its
// JVMs started once rather than every round (a JVM takes up to half a
// minute to start on a busy 2-core machine): the latency statistics Jetty
// published, the memory rows, and CPU every 5 s.
func TestReproductionJetty(t *testing.T) {
	tolltest.RunReproduction(t, tolltest.Reproduction{File: "jetty.yaml", Layout: "jetty", Java: true, Root: true,
		Short: []string{"--rounds", "2", "--warmup", "0s", "--duration", "5s", "--restart", "once"},
		Rows: []string{"| latency p50 (ms) |", "| latency mean (ms) |", "| latency min (ms) |", "| latency p99 (ms) |",
			"| RSS (MiB) |", "| JVM heap committed (MiB) |", "CPU every 5 s", "| baseline |", "| otel |"}})
}

// TestReproductionSermant runs examples/reproductions/sermant.yaml short:
// a row per number of users, "baseline / variant / Δ" cells for CPU, heap,
// metaspace, P90, P95 and throughput, and the plugin table.
func TestReproductionSermant(t *testing.T) {
	tolltest.RunReproduction(t, tolltest.Reproduction{File: "sermant.yaml", Layout: "sermant", Java: true, Root: true,
		Short: []string{"--rounds", "2", "--warmup", "1s", "--duration", "2s"},
		Rows: []string{"| 10 users |", "| 20 users |", "JVM heap used (MiB)", "JVM metaspace used (MiB)", "latency p90 (ms)",
			"latency p95 (ms)", "throughput (req/s)", "max TPS (best second)", "| otel at 20 users |"}})
}

// TestReproductionEaseAgent runs examples/reproductions/easeagent.yaml
// short: k6's summary rows side by side and each request of the mix, the
// 3-span and the 10-span one.
func TestReproductionEaseAgent(t *testing.T) {
	tolltest.RunReproduction(t, tolltest.Reproduction{File: "easeagent.yaml", Layout: "easeagent", Java: true, Root: true,
		Short: []string{"--rounds", "2", "--warmup", "1s", "--duration", "4s"},
		Rows: []string{"| http_req_duration avg (ms) |", "| http_req_duration min (ms) |", "| http_req_duration p(95) (ms) |",
			"| http_reqs (/s) |", "| process CPU (cores) |", "| heap used (MiB) |", "| owner-details-3-spans |", "| all-vets-10-spans |"}})
}
