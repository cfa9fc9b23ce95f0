package leftover

import (
	"archive/tar"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/container"
	"github.com/tollperf/toll/runid"
)

// testImage imports a one-file image into e (no registry is needed) and
// returns its name. The image is removed when the test ends, after the
// containers created from it (cleanups run last first).
func testImage(t *testing.T, e *container.Engine) string {
	t.Helper()
	const name = "localhost/toll-leftover-test:1"
	path := filepath.Join(t.TempDir(), "rootfs.tar")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	body := []byte("toll leftover test\n")
	tw.WriteHeader(&tar.Header{Name: "README", Mode: 0o644, Size: int64(len(body))})
	tw.Write(body)
	tw.Close()
	f.Close()
	if out, err := exec.Command(e.Path, "import", path, name).CombinedOutput(); err != nil {
		t.Skipf("%s cannot import an image: %v: %s", e.Name, err, out)
	}
	t.Cleanup(func() { exec.Command(e.Path, "rmi", name).Run() })
	return name
}

// TestContainersRemovesOnlyDeadRuns labels one container with a run that is
// gone and one with a live run (the test): only the first may be removed.
func TestContainersRemovesOnlyDeadRuns(t *testing.T) {
	ctx := context.Background()
	e, err := container.Find(ctx, "auto")
	if err != nil {
		t.Skipf("%v; scripts/install-test-deps.sh installs podman", err)
	}
	image := testImage(t, e)
	self, err := runid.Self()
	if err != nil {
		t.Fatal(err)
	}
	dead := deadRun(t)
	create := func(name string, id runid.ID) {
		t.Helper()
		out, err := exec.Command(e.Path, "create", "--name", name, "--label", container.LabelRun+"="+id.String(), image, "/none").CombinedOutput()
		if err != nil {
			t.Fatalf("%s create: %v: %s", e.Name, err, out)
		}
		t.Cleanup(func() { e.Remove(context.Background(), name) })
	}
	live := container.Name("toll-test-live", self.String())
	create(live, self)
	// Every toll run that starts removes the containers of dead runs
	// too: one started by another test package at the same moment may
	// take the stale container first. Clean must remove it in one of a
	// few tries, and never leave it.
	var stale string
	for try := 1; ; try++ {
		stale = container.Name(fmt.Sprintf("toll-test-stale%d", try), dead.String())
		create(stale, dead)
		removed, err := Containers{}.Clean(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var what []string
		for _, r := range removed {
			what = append(what, r.String())
		}
		if strings.Contains(strings.Join(what, "\n"), "container "+stale+" ("+e.Name) {
			break
		}
		if exists(t, e, stale) || try == 3 {
			t.Fatalf("removed %q, want the container of the dead run, %s", what, stale)
		}
	}
	left, err := e.List(ctx, container.LabelRun)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range left {
		names = append(names, c.Name)
	}
	if strings.Contains(strings.Join(names, " "), stale) {
		t.Errorf("the container of the dead run %v is still there", dead)
	}
	if !strings.Contains(strings.Join(names, " "), live) {
		t.Errorf("removed %s, whose run lives (left: %v)", live, names)
	}
}

// exists reports whether a container named name exists.
func exists(t *testing.T, e *container.Engine, name string) bool {
	t.Helper()
	cs, err := e.List(context.Background(), container.LabelRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}
