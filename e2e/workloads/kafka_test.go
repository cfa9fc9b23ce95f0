package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/scenario"
)

// kafkaExample is examples/kafka, from this package's directory.
const (
	kafkaExample = "../../examples/kafka"
	javaExample  = "../../examples/java"
)

// TestKafkaJobOTel runs examples/kafka/kafka-ci.yaml, the CI version of the
// Kafka example: a real KRaft broker per variant and a job that produces
// and consumes 20,000 messages, 3 times per variant, without and with the
// OpenTelemetry Java agent. It checks what issue #15 asks: produce and
// consume time per million messages for both variants, wall time per
// million with an interval, and spans per message from the sink (the agent
// instrumented kafka-clients: at least one span per message; none without
// it). It needs examples/kafka/build.sh (.ci/run runs it) and root.
func TestKafkaJobOTel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Kafka broker and JVM jobs")
	}
	example, err := filepath.Abs(kafkaExample)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"target/toll-kafka-job.jar", "target/lib", "../java/agents/opentelemetry-javaagent.jar"} {
		if _, err := os.Stat(filepath.Join(example, f)); err != nil {
			msg := fmt.Sprintf("no examples/kafka/%s: run examples/kafka/build.sh (.ci/run does)", f)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("network: isolated needs root")
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", filepath.Join(example, "kafka-ci.yaml"), "--out", out, "--seed", "21")
	if code != 0 {
		t.Fatalf("toll run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	s := tolltest.ReadSummary(t, out)
	for _, v := range []string{"baseline", "otel"} {
		for _, c := range []string{"job_wall_s_per_work", "log_produce_per_million_s", "log_consume_per_million_s", "job_cpu_s"} {
			if x := s.Value(t, v, c); !(x > 0) {
				t.Errorf("%s: %s = %v", v, c, x)
			}
		}
	}
	if spans := s.Value(t, "otel", "job_spans_per_work"); spans < 1 {
		t.Errorf("the agent sent %.2f spans per message, want at least 1 (a send span each)", spans)
	}
	if spans := s.Value(t, "baseline", "job_spans_per_work"); spans != 0 {
		t.Errorf("the baseline sent %.2f spans per message", spans)
	}
	if d := s.Delta(t, "otel", "job_wall_s_per_work"); d.Pct == nil || d.Verdict == "" || strings.HasPrefix(d.Verdict, "n/a") {
		t.Errorf("wall time per million messages has no comparison: %+v", d)
	}
	if !strings.Contains(stdout, "job: wall time per 1000000 messages (s)") || !strings.Contains(stdout, "× baseline wall time") {
		t.Errorf("report lacks the per-million row or the headline:\n%s", stdout)
	}
}

// TestWorkloadExamples checks the start-up and Kafka examples without
// running them: valid, isolated (they run a third-party agent), and the
// workloads the issue asks for.
func TestWorkloadExamples(t *testing.T) {
	st, err := scenario.Read(filepath.Join(javaExample, "startup.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Workload() != scenario.WorkloadStartup || len(st.Steps()) != 2 || st.Network != scenario.NetworkIsolated {
		t.Errorf("startup.yaml: workload %s, %d CPU limits, network %s", st.Workload(), len(st.Steps()), st.Network)
	}
	for _, f := range []string{"kafka.yaml", "kafka-ci.yaml"} {
		k, err := scenario.Read(filepath.Join(kafkaExample, f))
		if err != nil {
			t.Fatal(err)
		}
		if k.Workload() != scenario.WorkloadJob || k.Network != scenario.NetworkIsolated || k.Job.Per != 1e6 || len(k.Job.LogMetrics) != 2 {
			t.Errorf("%s: workload %s, network %s, per %v", f, k.Workload(), k.Network, k.Job.Per)
		}
	}
}
