package sampling

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestNodeRuntime runs a Node.js service with tollstats.cjs preloaded, and
// a variant that keeps objects per request: the table has Node's rows (its
// V8 heap, collections and event loop, read from the file the script
// writes), and the variant's heap is the larger.
func TestNodeRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Node.js")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node (apt-get install nodejs): ", err)
	}
	stats, err := filepath.Abs("../../probe/node/tollstats.cjs")
	if err != nil {
		t.Fatal(err)
	}
	hello, err := filepath.Abs("testdata/hello.js")
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf(`name: node
services:
  - name: hello
    command: [node, %s, "${port:hello}"]
    env: {NODE_OPTIONS: "--require %s"}
    ready: {http: "http://127.0.0.1:${port:hello}/", timeout: 20s}
    measure: true
variants:
  - name: baseline
  - name: keeps
    services:
      hello: {env: {KEEP_KIB: "16"}}
load:
  target: "http://127.0.0.1:${port:hello}"
  requests: [{path: /}]
  rate: 200
  warmup: 2s
  duration: 4s
rounds: 2
`, hello, stats)
	path := filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A run too noisy to be valid (exit 3) still has its readings, which
	// are what this test checks.
	if err := cmd.Run(); err != nil && tolltest.ExitCode(err) != 3 {
		t.Fatalf("toll run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for _, row := range []string{"Node heap used (MiB)", "Node heap total (MiB)", "Node GCs (/min)", "Node event loop busy (ms/s)"} {
		if !strings.Contains(stdout.String(), row) {
			t.Errorf("the table lacks the row %q:\n%s", row, stdout.String())
		}
	}
	sum := tolltest.ReadSummary(t, out)
	base, keeps := sum.Value(t, "baseline", "node_heap_used_mib"), sum.Value(t, "keeps", "node_heap_used_mib")
	if base <= 1 || keeps < base+8 {
		t.Errorf("Node heap used: baseline %.1f MiB, keeps %.1f: want a heap, and a larger one for the variant that keeps objects", base, keeps)
	}
	if gcs := sum.Value(t, "baseline", "node_gcs_per_min"); gcs <= 0 {
		t.Errorf("baseline: %.1f collections per minute, want some", gcs)
	}
	if busy := sum.Value(t, "baseline", "node_event_loop_busy_ms_per_s"); busy <= 0 || busy > 1000 {
		t.Errorf("baseline: event loop busy %.2f ms/s, want a share of a second", busy)
	}
	metrics, err := os.ReadFile(filepath.Join(out, "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(metrics, []byte("toll_node_heap_used_bytes{")) {
		t.Errorf("metrics.txt lacks toll_node_heap_used_bytes")
	}
}
