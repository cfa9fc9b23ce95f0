package kubejvm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/kubetest"
	"github.com/tollperf/toll/e2e/tolltest"
)

// javaJars are what toll-java:dev holds besides the JDK; without them
// scripts/kube-cluster.sh builds no JVM image.
var javaJars = []string{"../../examples/java/target/toll-java-example.jar", "../../examples/java/agents/opentelemetry-javaagent.jar"}

// TestJavaAgentOnCluster runs the Java example's Spring Boot provider in
// its JVM image on the cluster, without and with the OpenTelemetry Java
// agent, one variant at a time: the agent's CPU per request is above the
// baseline's, and its spans reach the variant's sink in the cluster.
func TestJavaAgentOnCluster(t *testing.T) {
	kubeconfig, c := kubetest.Cluster(t)
	for _, j := range javaJars {
		if _, err := os.Stat(j); err != nil {
			t.Skipf("%v: no JVM image toll-java:dev without it (examples/java/build.sh, examples/java/fetch-agents.sh, then scripts/kube-cluster.sh java-image)", err)
		}
	}
	kubetest.Empty(t, c)
	src, err := os.ReadFile("../../examples/kubernetes/java-agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A shorter variant warm-up than the example's minute: what is
	// checked holds without a settled JIT too.
	short := strings.Replace(string(src), "variant_warmup: 60s", "variant_warmup: 20s", 1)
	if short == string(src) {
		t.Fatal("the example sets no variant_warmup: 60s to shorten")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "java-agent.yaml")
	if err := os.WriteFile(path, []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	args := append(append([]string{"run"}, kubetest.KubeArgs(kubeconfig, out)...), "--sequential", "--restart", "once", "--rounds", "2", "--warmup", "2s", "--duration", "5s", path)
	code, stdout, stderr := tolltest.Run(t, args...)
	if code != cli.ExitOK && code != cli.ExitInvalid {
		t.Fatalf("toll run --kubernetes (Java agent): exit %d\n%s\n%s", code, stdout, stderr)
	}
	var spans uint64
	for _, tr := range tolltest.ReadTrials(t, out) {
		if tr.Interrupted || tr.Load.OK == 0 {
			t.Errorf("trial %d (%s): interrupted %v (%s), %d OK requests", tr.Index, tr.Variant, tr.Interrupted, tr.Error, tr.Load.OK)
		}
		// The sink's counts are its totals so far.
		if tr.Variant == "otel" && len(tr.Telemetry) > 0 {
			spans = max(spans, tr.Telemetry[len(tr.Telemetry)-1].Spans)
		}
	}
	if spans == 0 {
		t.Errorf("no span reached otel's sink by the end of its trials")
	}
	s := tolltest.ReadSummary(t, out)
	base, otel := s.Value(t, "baseline", "cpu_per_request_ms"), s.Value(t, "otel", "cpu_per_request_ms")
	t.Logf("CPU per request: baseline %.3f ms, otel %.3f ms; otel's sink had %d spans", base, otel, spans)
	if !(otel > base) {
		t.Errorf("otel's CPU per request %.3f ms is not above the baseline's %.3f ms\n%s", otel, base, stdout)
	}
	// The results directory reads as a local run's: the report shows the
	// JVM's rows, and compare reads it against a copy of itself.
	tolltest.ReportAndCompare(t, out, []string{"CPU per request (ms)", "JVM heap used"}, "CPU per request")
	if left := kubetest.Gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
}

// TestJobOnCluster runs a job experiment on the cluster: a JVM from its
// start to the end of `java -version` in the JVM image, without and with
// the OpenTelemetry Java agent, three times each, every run a Kubernetes
// Job timed inside its container: the agent's premain reads as more CPU,
// and no Job is left.
func TestJobOnCluster(t *testing.T) {
	kubeconfig, c := kubetest.Cluster(t)
	for _, j := range javaJars {
		if _, err := os.Stat(j); err != nil {
			t.Skipf("%v: no JVM image toll-java:dev without it (examples/java/build.sh, examples/java/fetch-agents.sh, then scripts/kube-cluster.sh java-image)", err)
		}
	}
	kubetest.Empty(t, c)
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := tolltest.Run(t, append(append([]string{"run"}, kubetest.KubeArgs(kubeconfig, out)...), "testdata/java-job.yaml")...)
	if code != cli.ExitOK && code != cli.ExitInvalid {
		t.Fatalf("toll run --kubernetes (job): exit %d\n%s\n%s", code, stdout, stderr)
	}
	trials := tolltest.ReadTrials(t, out)
	if len(trials) != 6 {
		t.Fatalf("%d trials, want 6 (2 variants × 3 jobs)", len(trials))
	}
	for _, tr := range trials {
		jr := tr.Job
		if jr == nil || jr.Failed || tr.Interrupted || !(jr.WallS > 0) || !(jr.UserS+jr.SystemS > 0) || jr.LogMetrics["java_version_n"] == 0 {
			t.Errorf("job %d (%s): %+v (%s)", tr.Index, tr.Variant, jr, tr.Error)
			continue
		}
		t.Logf("job %d (%s): wall %.3f s, CPU %.3f s, max RSS %.0f MiB", tr.Index, tr.Variant, jr.WallS, jr.UserS+jr.SystemS, float64(jr.MaxRSSBytes)/(1<<20))
	}
	s := tolltest.ReadSummary(t, out)
	base, otel := s.Value(t, "baseline", "job_cpu_s"), s.Value(t, "otel", "job_cpu_s")
	d := s.Delta(t, "otel", "job_cpu_s")
	t.Logf("job CPU: baseline %.3f s, otel %.3f s (%s)", base, otel, d.String())
	if !(otel > base) {
		t.Errorf("the agent's job CPU %.3f s is not above the baseline's %.3f s\n%s", otel, base, stdout)
	}
	if left := kubetest.Gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
}
