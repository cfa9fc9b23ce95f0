package run

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestImportsNoBackend keeps the orchestrator apart from every backend: run
// reaches the services only through package backend, and cli builds the
// backend a run uses. Neither a backend nor what only backends use (the
// places, cgroups, containers, a Kubernetes client) may be among run's
// dependencies, direct or not.
func TestImportsNoBackend(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command to list run's dependencies with")
		}
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/tollperf/toll/backend") {
		t.Fatalf("run's dependencies lack package backend: the list is not run's (%d packages)", len(deps))
	}
	for _, tt := range []struct {
		pkg, why string
	}{
		{"github.com/tollperf/toll/local", "the local backend, which cli builds"},
		{"github.com/tollperf/toll/kube", "the Kubernetes backend, which cli builds"},
		{"github.com/tollperf/toll/place", "the local backend's places"},
		{"github.com/tollperf/toll/cgroup", "the local backend's cgroups"},
		{"github.com/tollperf/toll/container", "the local backend's container engines"},
		{"github.com/tollperf/toll/netns", "the local backend's check of an isolated network"},
		{"k8s.io/client-go/kubernetes", "the Kubernetes backend's client"},
	} {
		if slices.Contains(deps, tt.pkg) {
			t.Errorf("run depends on %s, %s: it reaches a backend through package backend only", tt.pkg, tt.why)
		}
	}
}
