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

// TestEnginesAndCgroupVersions builds a container's arguments for each
// engine on each cgroup version, from the engine's answer to toll's info
// question: the cgroup parent is the service's path from the hierarchy's
// root on both versions (cgroupfs placement: Podman told so, Docker's
// daemon configured so), Podman runs with runc on v1 and its own runtime
// on v2, and a Docker daemon with the systemd driver, whose
// --cgroup-parent must name a slice in systemd's tree, is refused with the
// way out.
func TestEnginesAndCgroupVersions(t *testing.T) {
	const parent = "/toll/q-1@2/base.p"
	for _, tc := range []struct {
		name, engine, answer string
		haveRunc             bool
		version, runtime     string
		prefix               string // the argv up to "run"
		err                  string
	}{
		{"podman v1 crun", Podman, "crun v1", true, "v1", "runc", "podman --cgroup-manager=cgroupfs --runtime=runc run", ""},
		{"podman v1 crun without runc", Podman, "crun v1", false, "v1", "crun", "podman --cgroup-manager=cgroupfs run", ""},
		{"podman v1 runc", Podman, "runc v1", true, "v1", "runc", "podman --cgroup-manager=cgroupfs run", ""},
		{"podman v2 crun", Podman, "crun v2", true, "v2", "crun", "podman --cgroup-manager=cgroupfs run", ""},
		{"docker v1 cgroupfs", Docker, "cgroupfs 1 runc", true, "v1", "runc", "docker run", ""},
		{"docker v2 cgroupfs", Docker, "cgroupfs 2 runc", true, "v2", "runc", "docker run", ""},
		{"docker v2 systemd", Docker, "systemd 2 runc", true, "", "", "", "cgroup driver is systemd (cgroup v2)"},
		{"docker v1 systemd", Docker, "systemd 1 runc", true, "", "", "", "native.cgroupdriver=cgroupfs"},
		{"podman garbled", Podman, "crun", true, "", "", "", `podman info: unexpected answer "crun"`},
		{"docker garbled", Docker, "cgroupfs 2", true, "", "", "", `docker info: unexpected answer "cgroupfs 2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Engine{Name: tc.engine, Path: tc.engine}
			if tc.engine == Podman {
				e.global = podmanGlobal()
			}
			e, err := configure(e, tc.answer, tc.haveRunc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("configure(%q) = %v, want an error containing %q", tc.answer, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.CgroupVersion != tc.version || e.Runtime != tc.runtime {
				t.Errorf("cgroup %s, runtime %s; want %s, %s", e.CgroupVersion, e.Runtime, tc.version, tc.runtime)
			}
			argv, err := e.RunArgs(Spec{Name: "c", Image: "localhost/app:1", CgroupParent: parent, CPUs: "1", CPULimit: 1, Memory: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(argv, " ")
			if !strings.HasPrefix(got, tc.prefix+" --rm ") {
				t.Errorf("argv %q, want it to start with %q", got, tc.prefix)
			}
			for _, want := range []string{"--cgroup-parent " + parent + " ", "--cpuset-cpus 1 ", "--cpus 1 ", "--memory 1073741824 ", "--network host "} {
				if !strings.Contains(got, want) {
					t.Errorf("argv lacks %q: %s", want, got)
				}
			}
		})
	}
}

// TestRunArgsPorts checks that a container with ports leaves the host's
// network for the engine's, and publishes each port on loopback only.
func TestRunArgsPorts(t *testing.T) {
	for _, name := range []string{Podman, Docker} {
		e := &Engine{Name: name, Path: name}
		argv, err := e.RunArgs(Spec{Name: "c", Image: "localhost/app:1", Ports: []Port{{Host: 41000, Container: 8080}, {Host: 41001, Container: 9090}}})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(argv, " ")
		if strings.Contains(got, "--network") {
			t.Errorf("%s: a container with ports must not share the host's network: %s", name, got)
		}
		for _, want := range []string{"--publish 127.0.0.1:41000:8080/tcp", "--publish 127.0.0.1:41001:9090/tcp"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: argv lacks %q: %s", name, want, got)
			}
		}
		if _, err := e.RunArgs(Spec{Name: "c", Image: "localhost/app:1", Ports: []Port{{Host: 0, Container: 8080}}}); err == nil {
			t.Errorf("%s: host port 0 accepted", name)
		}
	}
}
