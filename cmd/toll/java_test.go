package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJavaAgentOTel runs a short version of examples/java/agents.yaml, the
// Spring Boot consumer without and with the OpenTelemetry Java agent, in a
// loopback-only network namespace, and checks what issue #7 asks of CI: the
// spans received per second match spans per request × the achieved rate;
// the JVM rows and the startup row are there; the agent loads more classes.
func TestJavaAgentOTel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real JVMs under load")
	}
	example, err := filepath.Abs("../../examples/java")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"target/toll-java-example.jar", "agents/opentelemetry-javaagent.jar"} {
		if _, err := os.Stat(filepath.Join(example, f)); err != nil {
			t.Skipf("no %s: run examples/java/fetch-agents.sh and examples/java/build.sh (.ci/run does)", f)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("network: isolated needs root")
	}
	src, err := os.ReadFile(filepath.Join(example, "agents.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	// Keep baseline and otel: cut the variants after otel's block.
	cut := strings.Index(s, "  - name: elastic")
	end := strings.Index(s, "\nload:")
	if cut < 0 || end < cut {
		t.Fatal("agents.yaml no longer has an elastic variant before load:")
	}
	s = s[:cut] + s[end+1:]
	for old, new := range map[string]string{
		"rounds: 10":                   "rounds: 3",
		"  warmup: 5s\n  duration: 4s": "  warmup: 4s\n  duration: 3s",
		"  - name: provider\n":         "  - name: provider\n    dir: " + example + "\n",
		"  - name: consumer\n":         "  - name: consumer\n    dir: " + example + "\n",
	} {
		if !strings.Contains(s, old) {
			t.Fatalf("agents.yaml no longer has %q", old)
		}
		s = strings.Replace(s, old, new, 1)
	}
	path := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := toll(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("toll run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	report := stdout.String()
	for _, row := range []string{"JVM heap used (MiB)", "JVM metaspace used (MiB)", "JVM classes loaded", "startup (ms)", "network isolated"} {
		if !strings.Contains(report, row) {
			t.Errorf("report lacks %q:\n%s", row, report)
		}
	}
	var sum summary
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	spr, sps, rps := sum.value(t, "otel", "spans_per_request"), sum.value(t, "otel", "spans_per_s"), sum.value(t, "otel", "throughput_rps")
	// The mix is 3 × /consumer (server span + 3 client spans) and 1 ×
	// /consumer10 (server span + 10): 5.75 spans per request.
	if spr < 4.5 || spr > 7 {
		t.Errorf("otel: %.2f spans per request, want about 5.75\n%s", spr, report)
	}
	if want := spr * rps; math.Abs(sps-want) > 0.1*want {
		t.Errorf("otel: %.1f spans/s, want spans per request × achieved rate = %.2f × %.1f = %.1f", sps, spr, rps, want)
	}
	if base, otel := sum.value(t, "baseline", "jvm_classes_loaded"), sum.value(t, "otel", "jvm_classes_loaded"); !(otel > base) {
		t.Errorf("classes loaded: baseline %.0f, otel %.0f; the agent must load more", base, otel)
	}
	if st := sum.value(t, "baseline", "startup_ms"); st <= 0 {
		t.Errorf("baseline startup %.0f ms", st)
	}
}
