package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestBenchmarkJSON checks the customSmallerIsBetter output: one entry per
// variant and ratio cost, the value the ratio to the baseline (the +10%
// CPU per request of the test run is 1.10), no entry for the baseline or
// for throughput, and the fields github-action-benchmark reads.
func TestBenchmarkJSON(t *testing.T) {
	var b bytes.Buffer
	if err := BenchmarkJSON(&b, summary(t)); err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	if err := json.Unmarshal(b.Bytes(), &entries); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	found := false
	for _, e := range entries {
		name, _ := e["name"].(string)
		if _, ok := e["value"].(float64); !ok || e["unit"] == "" || name == "" {
			t.Errorf("entry without name, unit or value: %v", e)
		}
		if strings.HasPrefix(name, "baseline") || strings.Contains(name, "throughput") {
			t.Errorf("entry %q should not be there", name)
		}
		if name == "otel @ 10 req/s: CPU per request" {
			found = true
			if v := e["value"].(float64); math.Abs(v-1.10) > 1e-4 || !strings.HasPrefix(e["range"].(string), "95% CI [") {
				t.Errorf("CPU per request: %v", e)
			}
		}
	}
	if !found {
		t.Errorf("no entry for otel's CPU per request:\n%s", b.String())
	}
}
