package repro

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// reproductions is examples/reproductions, from this package's directory.
const reproductions = "../../examples/reproductions"

// reproduction is one published benchmark's scenario and what its short
// version's layout must show.
type reproduction struct {
	file   string
	layout string
	// short are the toll run flags of its short version.
	short []string
	// java says it runs the Spring Boot example with the OpenTelemetry
	// agent; root that it needs root (network: isolated, bpftrace).
	java, root bool
	// programs are what its services run that may not be installed.
	programs []string
	// rows are texts the layout must print: its rows and columns.
	rows []string
}

// runReproduction runs the short version of a scenario of
// examples/reproductions in place (its services' paths are relative to
// it), then checks that `toll report --layout` prints the benchmark's rows
// and that report.md ends with the same layout (the scenario's
// report.layout). A run that its trials' flags make invalid (exit 3, a busy
// machine missing the rate) still has its tables; any other failure fails.
func runReproduction(t *testing.T, r reproduction) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs services under load")
	}
	if r.java {
		java, err := filepath.Abs("../../examples/java")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"target/toll-java-example.jar", "agents/opentelemetry-javaagent.jar"} {
			if _, err := os.Stat(filepath.Join(java, f)); err != nil {
				msg := fmt.Sprintf("no examples/java/%s: run examples/java/fetch-agents.sh and examples/java/build.sh (.ci/run does)", f)
				if os.Getenv("CI") == "true" {
					t.Fatal(msg)
				}
				t.Skip(msg)
			}
		}
	}
	if r.root && os.Geteuid() != 0 {
		t.Skip("needs root (network: isolated, bpftrace)")
	}
	for _, p := range r.programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("needs %s: %v", p, err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	args := append([]string{"run", filepath.Join(reproductions, r.file), "--out", out, "-q"}, r.short...)
	cmd := tolltest.Command(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch code := tolltest.ExitCode(err); code {
	case 0:
	case cli.ExitInvalid:
		t.Logf("the run is invalid (a busy machine?); its tables are still checked:\n%s", stderr.String())
	default:
		t.Fatalf("toll %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}

	rep := tolltest.Command(t, "report", "--from-summary", "--layout", r.layout, out)
	var layout bytes.Buffer
	rep.Stdout, rep.Stderr = &layout, &stderr
	if code := tolltest.ExitCode(rep.Run()); code != 0 && code != cli.ExitInvalid {
		t.Fatalf("toll report --layout %s: exit %d\n%s", r.layout, code, stderr.String())
	}
	for _, row := range r.rows {
		if !strings.Contains(layout.String(), row) {
			t.Errorf("layout %s lacks %q:\n%s", r.layout, row, layout.String())
		}
	}
	// An interval is its bounds ("[+5.6%, +36.2%]") or a difference's
	// half-width ("± 0.12").
	if !regexp.MustCompile(`\[[-+][0-9.]+%, [-+][0-9.]+%\]|± [0-9]`).MatchString(layout.String()) {
		t.Errorf("layout %s shows no interval:\n%s", r.layout, layout.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	title, _, _ := strings.Cut(layout.String(), "\n")
	if !strings.Contains(string(md), "\n"+title+"\n") {
		t.Errorf("report.md lacks the scenario's layout %q", title)
	}
}

// TestReproductionSkyWalkingGo runs examples/reproductions/skywalking-go.yaml
// short: its paragraph's three sentences, the spans the collector received.
func TestReproductionSkyWalkingGo(t *testing.T) {
	runReproduction(t, reproduction{file: "skywalking-go.yaml", layout: "skywalking-go",
		short: []string{"--rounds", "2", "--warmup", "1s", "--duration", "2s"},
		rows: []string{"In the baseline version at", "In the otel-go version at", "average response time for a single request was",
			"spans/s from otel-go", "| latency mean (ms) |", "| CPU (cores) |"}})
}

// TestReproductionKindling runs examples/reproductions/kindling.yaml short:
// both load steps side by side, the machine's, the application's and the
// bpftrace agent's own rows.
func TestReproductionKindling(t *testing.T) {
	runReproduction(t, reproduction{file: "kindling.yaml", layout: "kindling", root: true, programs: []string{"bpftrace"},
		short: []string{"--rounds", "2", "--warmup", "1s", "--duration", "2s"},
		rows: []string{"400 req/s: baseline", "400 req/s: ebpf-agent", "2000 req/s: Δ", "| machine-cpu (%) |", "| machine-mem (%) |",
			"| application-cpu (cores) |", "| application-latency (mean, ms) |", "| application-tps (req/s) |",
			"| agent kindling cpu (cores) |", "| agent kindling rss (MiB) |"}})
}

// TestReproductionJetty runs examples/reproductions/jetty.yaml short, its
// JVMs started once rather than every round (a JVM takes up to half a
// minute to start on a busy 2-core machine): the latency statistics Jetty
// published, the memory rows, and CPU every 5 s.
func TestReproductionJetty(t *testing.T) {
	runReproduction(t, reproduction{file: "jetty.yaml", layout: "jetty", java: true, root: true,
		short: []string{"--rounds", "2", "--warmup", "0s", "--duration", "5s", "--restart", "once"},
		rows: []string{"| latency p50 (ms) |", "| latency mean (ms) |", "| latency min (ms) |", "| latency p99 (ms) |",
			"| RSS (MiB) |", "| JVM heap committed (MiB) |", "CPU every 5 s", "| baseline |", "| otel |"}})
}

// TestReproductionSermant runs examples/reproductions/sermant.yaml short:
// a row per number of users, "baseline / variant / Δ" cells for CPU, heap,
// metaspace, P90, P95 and throughput, and the plugin table.
func TestReproductionSermant(t *testing.T) {
	runReproduction(t, reproduction{file: "sermant.yaml", layout: "sermant", java: true, root: true,
		short: []string{"--rounds", "2", "--warmup", "1s", "--duration", "2s"},
		rows: []string{"| 10 users |", "| 20 users |", "JVM heap used (MiB)", "JVM metaspace used (MiB)", "latency p90 (ms)",
			"latency p95 (ms)", "throughput (req/s)", "max TPS (best second)", "| otel at 20 users |"}})
}

// TestReproductionEaseAgent runs examples/reproductions/easeagent.yaml
// short: k6's summary rows side by side and each request of the mix, the
// 3-span and the 10-span one.
func TestReproductionEaseAgent(t *testing.T) {
	runReproduction(t, reproduction{file: "easeagent.yaml", layout: "easeagent", java: true, root: true,
		short: []string{"--rounds", "2", "--warmup", "1s", "--duration", "4s"},
		rows: []string{"| http_req_duration avg (ms) |", "| http_req_duration min (ms) |", "| http_req_duration p(95) (ms) |",
			"| http_reqs (/s) |", "| process CPU (cores) |", "| heap used (MiB) |", "| owner-details-3-spans |", "| all-vets-10-spans |"}})
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
