package shapes

import (
	"os"
	"strings"
	"testing"
)

// TestContainersDocker is TestContainersQuickstart through Docker, where a
// Docker daemon answers (DOCKER_HOST is honoured): the same topology, the
// same checks (cost from each container's cgroup, the OpenTelemetry
// variant dearer, spans reaching toll, no container left). Docker places
// the containers with --cgroup-parent only with its cgroupfs driver; with
// systemd toll refuses, and the test says so.
func TestContainersDocker(t *testing.T) {
	e := containerImageOf(t, "docker")
	path := containerScenario(t, "containers-docker", `  rate: 100
  warmup: 1s
  duration: 2s
rounds: 3`)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "    image: "+testImageName+"\n", "    image: "+testImageName+"\n    engine: docker\n")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	checkContainersQuickstart(t, e, path)
}
