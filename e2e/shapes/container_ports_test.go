package shapes

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/container"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestContainerPorts runs the provider as a container that listens on a
// fixed port, 8080, published with ports: two variants run side by side
// (restart once), so their two containers listen on the same port inside
// and on different ports of the host's loopback. The consumer, a host
// process, reaches each through its variant's ${port:provider}; every
// request of every trial succeeds, the provider's cost is read from its
// cgroup, and no container is left. It runs through Podman and through
// Docker, each where it answers.
func TestContainerPorts(t *testing.T) {
	for _, engine := range []string{container.Podman, container.Docker} {
		t.Run(engine, func(t *testing.T) { testContainerPorts(t, engine) })
	}
}

// testContainerPorts is TestContainerPorts through engine.
func testContainerPorts(t *testing.T, engine string) {
	e := containerImageOf(t, engine)
	s := fmt.Sprintf(`name: ports
services:
  - name: provider
    image: %s
    engine: %s
    ports: {provider: 8080}
    command: [app, provider, --addr, "0.0.0.0:${port:provider}", --work, "5000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 30s}
    measure: true
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider", --work, "2000", --trace, none]
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 10s}
variants:
  - name: baseline
  - name: twin
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {path: /consumer}
  rate: 50
  warmup: 1s
  duration: 1s
rounds: 2
`, testImageName, engine)
	path := filepath.Join(t.TempDir(), "ports.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == cli.ExitInvalid) {
		t.Fatalf("toll run: %v\n%s", err, stderr.String())
	}
	if left := runContainers(t, e, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("containers left after the run: %+v", left)
	}
	trials := tolltest.ReadTrials(t, out)
	if len(trials) != 4 {
		t.Fatalf("%d trials, want 4\n%s", len(trials), stderr.String())
	}
	hostPorts := map[string]int{} // by variant
	for _, tr := range trials {
		for _, sr := range tr.Services {
			if sr.Name != "provider" {
				continue
			}
			if len(sr.Ports) != 1 || sr.Ports[0].Container != 8080 || sr.Ports[0].Host <= 0 {
				t.Errorf("trial %d: the provider's published ports are recorded as %+v, want 8080 at a host port", tr.Index, sr.Ports)
			} else {
				hostPorts[tr.Variant] = sr.Ports[0].Host
			}
		}
		if tr.Load.Completed == 0 || tr.Load.OK != tr.Load.Completed {
			t.Errorf("trial %d (%s): %d of %d requests answered 2xx through the published port, want all\n%s", tr.Index, tr.Variant, tr.Load.OK, tr.Load.Completed, stderr.String())
		}
		for _, ss := range tr.Samples {
			if ss.Service == "provider" && ss.Source != "cgroup" {
				t.Errorf("trial %d: the provider was read from %s, want its cgroup", tr.Index, ss.Source)
			}
		}
	}
	if hostPorts["baseline"] == hostPorts["twin"] {
		t.Errorf("both variants' providers published at host port %d, want one each", hostPorts["baseline"])
	}
	sum := tolltest.ReadSummary(t, out)
	for _, v := range []string{"baseline", "twin"} {
		if c := sum.Value(t, v, "cpu_per_request_ms"); c <= 0 {
			t.Errorf("%s: the provider container's CPU per request is %.3f ms", v, c)
		}
	}
}
