package container

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestParsePS reads each engine's listing of labelled containers, captured
// from podman 4.3 (`podman ps --all --format json`) and written after
// Docker's documented `{{json .}}` format.
func TestParsePS(t *testing.T) {
	for _, tc := range []struct {
		file  string
		parse func([]byte) ([]Container, error)
		name  string
		state string
	}{
		{"testdata/podman-ps.json", parsePodmanPS, "fixture-1", "created"},
		{"testdata/docker-ps.jsonl", parseDockerPS, "toll-4242-777-baseline.provider-1", "exited"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := tc.parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 {
				t.Fatalf("got %d containers, want 1", len(cs))
			}
			c := cs[0]
			if c.Name != tc.name || c.State != tc.state || c.Labels[LabelRun] != "4242@777" || c.Labels[LabelService] != "baseline/provider" || c.Image != "localhost/toll-test:dev" {
				t.Errorf("got %+v", c)
			}
		})
	}
	if cs, err := parsePodmanPS([]byte("[]\n")); err != nil || len(cs) != 0 {
		t.Errorf("empty podman listing: %v, %v", cs, err)
	}
	if cs, err := parseDockerPS(nil); err != nil || len(cs) != 0 {
		t.Errorf("empty docker listing: %v, %v", cs, err)
	}
}

// TestRunArgs checks that a container gets the service's cgroup, CPUs and
// limits, the host's network, toll's own resource limits, its labels and
// environment, and that the image comes before the command.
func TestRunArgs(t *testing.T) {
	e := &Engine{Name: Podman, Path: "/usr/bin/podman", global: []string{"--cgroup-manager=cgroupfs", "--runtime=runc"}}
	argv, err := e.RunArgs(Spec{Name: "toll-1-2-base.p-1", Image: "localhost/app:1", Argv: []string{"app", "--port", "8080"},
		Env: []string{"A=b c"}, Dir: "/work", Labels: map[string]string{LabelRun: "1@2", LabelService: "base/p"},
		CgroupParent: "/toll/q-1@2/base.p", CPUs: "1", CPULimit: 0.5, Memory: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(argv, " ")
	for _, want := range []string{
		"/usr/bin/podman --cgroup-manager=cgroupfs --runtime=runc run --rm --name toll-1-2-base.p-1 --network host --ulimit nofile=",
		"--pull never", "--label toll.run=1@2 --label toll.service=base/p", "--cgroup-parent /toll/q-1@2/base.p",
		"--cpuset-cpus 1", "--cpus 0.5", "--memory 268435456", "--workdir /work",
		"localhost/app:1 app --port 8080",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("argv lacks %q:\n%s", want, got)
		}
	}
	if i := slices.Index(argv, "--env"); i < 0 || argv[i+1] != "A=b c" {
		t.Errorf("environment not passed as one argument: %q", argv)
	}
	if !strings.HasSuffix(got, "localhost/app:1 app --port 8080") {
		t.Errorf("the command must follow the image: %s", got)
	}
}

// TestName keeps container names to the characters engines accept.
func TestName(t *testing.T) {
	if got, want := Name("toll", "12@34", "base.provider", "1"), "toll-12-34-base.provider-1"; got != want {
		t.Errorf("Name = %q, want %q", got, want)
	}
}
