package place

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestHost checks that a host process runs its own command, with its
// environment and directory, on its CPUs.
func TestHost(t *testing.T) {
	l, err := Host{}.Launch(context.Background(), Service{Name: "baseline/app", Argv: []string{"app", "-x"},
		Env: []string{"A=1"}, HostEnv: []string{"PATH=/bin", "A=1"}, Dir: "/srv", CPUs: "1-2"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.Argv, []string{"app", "-x"}) || !slices.Equal(l.Env, []string{"PATH=/bin", "A=1"}) || l.Dir != "/srv" {
		t.Errorf("host launch %+v", l)
	}
	if !slices.Equal(l.Supervisor, []string{"--cpus", "1-2"}) || l.Release != nil || l.Members != nil || l.Container != "" {
		t.Errorf("host launch without a cgroup: supervisor %q, release %v, members %q", l.Supervisor, l.Release != nil, l.Members)
	}
}

// TestContainersNeedACgroup checks that a container is refused, before any
// engine is asked, where the run has no cgroup to read its cost from.
func TestContainersNeedACgroup(t *testing.T) {
	var c Containers
	_, err := c.Launch(context.Background(), Service{Name: "baseline/app", Image: "localhost/app:1", Engine: "auto"})
	if err == nil || !strings.Contains(err.Error(), "read from the cgroup") || !strings.Contains(err.Error(), "baseline/app") {
		t.Errorf("Launch without a cgroup = %v", err)
	}
	if len(c.engines) != 0 {
		t.Errorf("an engine was looked up: %v", c.engines)
	}
}
