package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/scenario"
)

// javaExample is examples/java, from this package's directory.
const javaExample = "../../examples/java"

// TestJavaAgentOTel runs a short version of examples/java/agents.yaml, the
// Spring Boot consumer without and with the OpenTelemetry Java agent, in a
// loopback-only network namespace, and checks that the
// spans received per second are the 4 spans each request makes (1 server +
// 3 client) × the achieved rate; the JVM heap, metaspace and classes rows
// and the startup row are there; the agent loads more classes.
//
// It needs the agents (examples/java/fetch-agents.sh) and the service
// (examples/java/build.sh). Without them it is skipped, except under CI=true,
// where .ci/run has made them and their absence is a failure.
func TestJavaAgentOTel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real JVMs under load")
	}
	example, err := filepath.Abs(javaExample)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"target/toll-java-example.jar", "agents/opentelemetry-javaagent.jar"} {
		if _, err := os.Stat(filepath.Join(example, f)); err != nil {
			msg := fmt.Sprintf("no examples/java/%s: run examples/java/fetch-agents.sh and examples/java/build.sh (.ci/run does)", f)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("network: isolated needs root")
	}

	path := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(path, shortJavaScenario(t, example), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	tolltest.SkipIfInvalid(t, cmd.Run(), stdout.String(), stderr.String())
	report := stdout.String()
	for _, row := range []string{"JVM heap used (MiB)", "JVM metaspace used (MiB)", "JVM classes loaded", "startup (ms)", "network isolated"} {
		if !strings.Contains(report, row) {
			t.Errorf("report lacks %q:\n%s", row, report)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum tolltest.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}

	// GET /consumer: the Spring MVC server span and 3 HttpURLConnection
	// client spans.
	const spansPerRequest = 4
	rps, sps := sum.Value(t, "otel", "throughput_rps"), sum.Value(t, "otel", "spans_per_s")
	t.Logf("otel: %.1f spans/s at %.1f req/s; classes loaded %.0f (baseline %.0f)", sps, rps,
		sum.Value(t, "otel", "jvm_classes_loaded"), sum.Value(t, "baseline", "jvm_classes_loaded"))
	if want := spansPerRequest * rps; math.Abs(sps-want) > 0.1*want {
		t.Errorf("otel: %.1f spans/s, want %d spans per request × %.1f req/s achieved = %.1f (±10%%)\n%s", sps, spansPerRequest, rps, want, report)
	}
	if spr := sum.Value(t, "otel", "spans_per_request"); math.Abs(spr-spansPerRequest) > 0.1*spansPerRequest {
		t.Errorf("otel: %.2f spans per request, want %d (±10%%)", spr, spansPerRequest)
	}
	if sps := sum.Value(t, "baseline", "spans_per_s"); sps != 0 {
		t.Errorf("baseline: %.1f spans/s, want none", sps)
	}
	// The agent's own classes and the instrumentation it injects: thousands.
	if base, otel := sum.Value(t, "baseline", "jvm_classes_loaded"), sum.Value(t, "otel", "jvm_classes_loaded"); otel < base+1000 {
		t.Errorf("classes loaded: baseline %.0f, otel %.0f; want the agent to load at least 1000 more", base, otel)
	}
	for _, v := range []string{"baseline", "otel"} {
		for _, c := range []string{"jvm_heap_used_mib", "jvm_metaspace_mib", "startup_ms"} {
			if x := sum.Value(t, v, c); !(x > 0) {
				t.Errorf("%s: %s is %v, want > 0", v, c, x)
			}
		}
	}
}

// shortJavaScenario returns examples/java/agents.yaml cut down for CI:
// baseline and otel only, a fixed design in place of its precision: started
// once, 3 rounds of 3 s + 3 s at 20 req/s (which a busy machine still
// serves: the spans per request do not depend on the rate), each variant
// warm-up phase until the JIT settles at most 15 s, and the services run
// in example (the scenario is written elsewhere).
func shortJavaScenario(t *testing.T, example string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(example, "agents.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]

	variants := mapValue(t, root, "variants")
	var keep []*yaml.Node
	for _, v := range variants.Content {
		if name := mapValue(t, v, "name").Value; name == "baseline" || name == "otel" {
			keep = append(keep, v)
		}
	}
	if len(keep) != 2 {
		t.Fatalf("agents.yaml: want variants baseline and otel, found %d of them", len(keep))
	}
	variants.Content = keep

	deleteKey(t, root, "precision")
	setKey(root, "rounds", "3")
	load := mapValue(t, root, "load")
	mapValue(t, load, "warmup").Value = "3s"
	mapValue(t, load, "duration").Value = "3s"
	setKey(load, "rate", "20")
	setKey(load, "variant_warmup", "15s")
	// In phases, as the run this test was measured with: 2 users, 200
	// req/s, then the trials' rate, so that the agent's warm-up spans
	// are exported before the first window.
	setKey(load, "variant_warmup_users", "2")
	setKey(load, "variant_warmup_rate", "200")
	until := &yaml.Node{Kind: yaml.MappingNode}
	setKey(until, "jit_below", "5ms")
	setKey(until, "over", "10s")
	setNode(load, "variant_warmup_until", until)

	for _, svc := range mapValue(t, root, "services").Content {
		svc.Content = append(svc.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: "dir"},
			&yaml.Node{Kind: yaml.ScalarNode, Value: example})
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mapValue returns the value of key in the YAML mapping m.
func mapValue(t *testing.T, m *yaml.Node, key string) *yaml.Node {
	t.Helper()
	if m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
	}
	t.Fatalf("agents.yaml: no %q at line %d", key, m.Line)
	return nil
}

// setKey sets key to the scalar value in the YAML mapping m, adding it
// when m has none.
func setKey(m *yaml.Node, key, value string) {
	setNode(m, key, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
}

// setNode sets key's value in the YAML mapping m to v, adding the key if
// m has none.
func setNode(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}

// deleteKey removes key, which must be there, from the YAML mapping m.
func deleteKey(t *testing.T, m *yaml.Node, key string) {
	t.Helper()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
	t.Fatalf("agents.yaml: no %q at line %d", key, m.Line)
}

// TestJavaScenarios checks the Java scenarios without running them: each
// is valid and isolated; agents-alternating.yaml runs agents.yaml's
// variants, provider and consumer, one variant at a time; spans.yaml runs
// agents-alternating.yaml's services and agents.yaml's variants (less
// Pyroscope, which makes no spans); every agent exports to toll's sink and
// has its calls home turned off.
func TestJavaScenarios(t *testing.T) {
	read := func(name string) *scenario.Scenario {
		s, err := scenario.Read(filepath.Join(javaExample, name))
		if err != nil {
			t.Fatal(err)
		}
		if s.Network != scenario.NetworkIsolated {
			t.Errorf("%s: network is %q, want isolated: it runs third-party agents", name, s.Network)
		}
		return s
	}
	agents, alternating, spans := read("agents.yaml"), read("agents-alternating.yaml"), read("spans.yaml")

	// sameVariants checks that b's variants are a's, word for word, less
	// those skip names.
	sameVariants := func(aName string, a []scenario.Variant, bName string, b []scenario.Variant, skip string) {
		var want []scenario.Variant
		for _, v := range a {
			if v.Name != skip {
				want = append(want, v)
			}
		}
		if len(b) != len(want) {
			t.Errorf("%s has %d variants, want %s's %d", bName, len(b), aName, len(want))
		}
		for i := range min(len(b), len(want)) {
			if x, y := b[i], want[i]; !reflect.DeepEqual(x, y) {
				t.Errorf("variant %d (%s) differs:\n %s  %+v\n %s %+v", i+1, y.Name, bName, x, aName, y)
			}
		}
	}
	sameVariants("agents.yaml", agents.Variants, "agents-alternating.yaml", alternating.Variants, "")
	sameVariants("agents.yaml", agents.Variants, "spans.yaml", spans.Variants, "pyroscope")

	// sameServices checks that every service of a is b's, word for word,
	// but the warm-up service, which differs by the route it warms.
	sameServices := func(aName string, a *scenario.Scenario, bName string, b *scenario.Scenario) {
		for _, x := range a.Services {
			if x.Name == "warmup" {
				continue
			}
			y, ok := b.Service(x.Name)
			if !ok {
				t.Errorf("%s has no service %s, which %s has", bName, x.Name, aName)
				continue
			}
			if !reflect.DeepEqual(x, y) {
				t.Errorf("service %s differs:\n %s  %+v\n %s %+v", x.Name, aName, x, bName, y)
			}
		}
	}
	sameServices("agents.yaml", agents, "agents-alternating.yaml", alternating)
	sameServices("agents-alternating.yaml", alternating, "spans.yaml", spans)
	if len(spans.Services) != len(alternating.Services) {
		t.Errorf("spans.yaml has %d services, agents-alternating.yaml %d", len(spans.Services), len(alternating.Services))
	}

	// What each agent needs to export to the sink and nowhere else.
	required := map[string]map[string]string{
		"opentelemetry-javaagent.jar": {
			"OTEL_EXPORTER_OTLP_ENDPOINT":           "${sink}",
			"OTEL_METRICS_EXPORTER":                 "none",
			"OTEL_LOGS_EXPORTER":                    "none",
			"OTEL_RESOURCE_PROVIDERS_AWS_ENABLED":   "false",
			"OTEL_RESOURCE_PROVIDERS_GCP_ENABLED":   "false",
			"OTEL_RESOURCE_PROVIDERS_AZURE_ENABLED": "false",
		},
		"elastic-apm-agent.jar": {
			"ELASTIC_APM_SERVER_URL":     "${sink}",
			"ELASTIC_APM_CLOUD_PROVIDER": "none",
			"ELASTIC_APM_CENTRAL_CONFIG": "false",
		},
		"dd-java-agent.jar": {
			"DD_TRACE_AGENT_URL":                   "${sink}",
			"DD_INSTRUMENTATION_TELEMETRY_ENABLED": "false",
			"DD_REMOTE_CONFIGURATION_ENABLED":      "false",
			"DD_PROFILING_ENABLED":                 "false",
			"DD_JMXFETCH_ENABLED":                  "false",
			"DD_RUNTIME_METRICS_ENABLED":           "false",
			"DD_TRACE_HEALTH_METRICS_ENABLED":      "false",
		},
		"pyroscope-agent.jar": {
			"PYROSCOPE_SERVER_ADDRESS": "${sink}",
		},
	}
	seen := map[string]bool{}
	for _, v := range agents.Variants {
		env := v.Services["consumer"].Env
		opts := env["JAVA_TOOL_OPTIONS"]
		if opts == "" {
			if v.Name != agents.Baseline {
				t.Errorf("variant %s runs no -javaagent", v.Name)
			}
			continue
		}
		jar := filepath.Base(strings.TrimPrefix(opts, "-javaagent:"))
		req, ok := required[jar]
		if !ok {
			t.Errorf("variant %s: unknown agent %q", v.Name, opts)
			continue
		}
		seen[jar] = true
		if !v.Exports {
			t.Errorf("variant %s: exports is not set, so a silent agent would go unflagged", v.Name)
		}
		for k, want := range req {
			if got := env[k]; got != want {
				t.Errorf("variant %s: %s=%q, want %q", v.Name, k, got, want)
			}
		}
	}
	for jar := range required {
		if !seen[jar] {
			t.Errorf("agents.yaml runs no variant with %s", jar)
		}
	}
}
