package shapes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/container"
	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/runid"
)

// testImageName is the image the container tests build: FROM scratch,
// holding a static toll.
const testImageName = "localhost/toll-test:e2e"

// testImages holds, per engine, the outcome of building the test image:
// once per test binary and engine.
var testImages struct {
	sync.Mutex
	built map[string]imageBuild
}

// imageBuild is the outcome of one build of the test image: an error that
// fails the test, or a reason to skip it.
type imageBuild struct {
	err  error
	skip string
}

// containerImage returns the engine the tests use and an image holding a
// static toll built from this tree, built once per test binary. It skips
// where no engine answers.
func containerImage(t *testing.T) *container.Engine {
	return containerImageOf(t, "auto")
}

// containerImageOf is containerImage with engine want: podman, docker or
// auto.
func containerImageOf(t *testing.T, want string) *container.Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("runs containers")
	}
	e, err := container.Find(context.Background(), want)
	if err != nil {
		t.Skipf("%v (scripts/install-test-deps.sh installs podman and runc)", err)
	}
	testImages.Lock()
	defer testImages.Unlock()
	b, ok := testImages.built[e.Name]
	if !ok {
		b = buildTestImage(e)
		if testImages.built == nil {
			testImages.built = map[string]imageBuild{}
		}
		testImages.built[e.Name] = b
	}
	if b.err != nil {
		t.Fatal(b.err)
	}
	if b.skip != "" {
		t.Skip(b.skip)
	}
	return e
}

// buildTestImage builds testImageName with engine e: FROM scratch, holding
// a static toll built from this tree. The image it replaces, which the tag
// no longer names, is removed (unless a container still uses it), so that
// test runs do not pile up untagged images.
func buildTestImage(e *container.Engine) imageBuild {
	dir, err := os.MkdirTemp("", "toll-image-")
	if err != nil {
		return imageBuild{err: err}
	}
	defer os.RemoveAll(dir)
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "toll"), "github.com/tollperf/toll/cmd/toll")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return imageBuild{err: fmt.Errorf("build a static toll: %v: %s", err, out)}
	}
	file := "FROM scratch\nCOPY toll /toll\nENTRYPOINT [\"/toll\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Containerfile"), []byte(file), 0o644); err != nil {
		return imageBuild{err: err}
	}
	before := imageID(e)
	if out, err := exec.Command(e.Path, "build", "-q", "-t", testImageName, "-f", filepath.Join(dir, "Containerfile"), dir).CombinedOutput(); err != nil {
		return imageBuild{skip: fmt.Sprintf("%s cannot build an image here: %v: %s", e.Name, err, out)}
	}
	if before != "" && before != imageID(e) {
		// Best effort: an image a container still uses stays.
		_ = exec.Command(e.Path, "rmi", before).Run()
	}
	return imageBuild{}
}

// imageID returns the id of the image testImageName names in engine e,
// "" when there is none.
func imageID(e *container.Engine) string {
	out, err := exec.Command(e.Path, "image", "inspect", "--format", "{{.Id}}", testImageName).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// containerScenario is the quickstart's topology with both services as
// containers of the test image. The consumer does a tenth of the
// quickstart's work per request, so that OpenTelemetry's spans are a large
// part of its CPU and their sign shows on a busy machine in a few rounds.
func containerScenario(t *testing.T, name, load string) string {
	t.Helper()
	s := fmt.Sprintf(`name: %s
services:
  - name: provider
    image: %s
    command: [app, provider, --addr, "127.0.0.1:${port:provider}", --work, "5000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 30s}
  - name: consumer
    image: %s
    command: [app, consumer, --addr, "127.0.0.1:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider", --work, "2000"]
    env:
      OTEL_EXPORTER_OTLP_ENDPOINT: "${sink}"
      OTEL_SERVICE_NAME: consumer
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 30s}
    measure: true
variants:
  - name: baseline
    services:
      consumer: {args: [--trace, none]}
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel]}
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {name: consumer, method: GET, path: /consumer}
%s
`, name, testImageName, testImageName, load)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runContainers returns the containers labelled with the run of toll pid.
func runContainers(t *testing.T, e *container.Engine, pid int) []container.Container {
	t.Helper()
	cs, err := e.List(context.Background(), container.LabelRun)
	if err != nil {
		t.Fatal(err)
	}
	var out []container.Container
	for _, c := range cs {
		if strings.HasPrefix(c.Labels[container.LabelRun], strconv.Itoa(pid)+"@") {
			out = append(out, c)
		}
	}
	return out
}

// TestContainersQuickstart runs the quickstart's topology with both services
// as containers: their cost is read from their cgroups, the OpenTelemetry
// variant costs more CPU per request than the baseline (the sign the
// quickstart finds with processes), its spans reach toll's sink from inside
// the container, and no container is left when the run ends.
func TestContainersQuickstart(t *testing.T) {
	e := containerImage(t)
	path := containerScenario(t, "containers", `  rate: 100
  warmup: 1s
  duration: 2s
rounds: 3`)
	checkContainersQuickstart(t, e, path)
}

// checkContainersQuickstart runs the scenario at path, the quickstart's
// topology as containers of engine e, and checks what
// TestContainersQuickstart says.
func checkContainersQuickstart(t *testing.T, e *container.Engine, path string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == cli.ExitInvalid) {
		// A shared machine may flag trials (exit 3); the costs still stand.
		t.Fatalf("toll run: %v\n%s", err, stderr.String())
	}
	if left := runContainers(t, e, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("containers left after the run: %+v", left)
	}
	trials := tolltest.ReadTrials(t, out)
	if len(trials) == 0 {
		t.Fatalf("no trials\n%s", stderr.String())
	}
	for _, tr := range trials {
		for _, s := range tr.Services {
			if s.Image != testImageName || !strings.HasPrefix(s.Container, e.Name+" toll-") || s.Cgroup == "" {
				t.Errorf("trial %d: service %s not recorded as a container with a cgroup: %+v", tr.Index, s.Name, s)
			}
		}
		for _, ss := range tr.Samples {
			if ss.Source != "cgroup" {
				t.Errorf("trial %d: %s read from %s, want its cgroup", tr.Index, ss.Service, ss.Source)
			}
		}
	}
	sum := tolltest.ReadSummary(t, out)
	base, otel := sum.Value(t, "baseline", "cpu_per_request_ms"), sum.Value(t, "otel", "cpu_per_request_ms")
	if !(otel > base) || base <= 0 {
		t.Errorf("CPU per request: baseline %.3f ms, otel %.3f ms; want otel above baseline, as with processes\n%s", base, otel, stderr.String())
	}
	if spr := sum.Value(t, "otel", "spans_per_request"); spr < 3.5 {
		t.Errorf("otel: %.2f spans per request reached toll from the container, want 4", spr)
	}
	if rss := sum.Value(t, "baseline", "rss_mib"); rss < 1 {
		t.Errorf("baseline RSS %.1f MiB: the container's processes were not sampled", rss)
	}
}

// TestContainersInterruptAndKill checks both ends of a run cut short: after
// SIGINT toll removes its containers itself; after SIGKILL the services'
// supervisors kill the containers' processes, the engine keeps the
// containers, and the next toll run removes them, by their label, and says
// so (`toll cleanup` does the same, through the same leftover.Clean).
func TestContainersInterruptAndKill(t *testing.T) {
	e := containerImage(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			path := containerScenario(t, "containers-"+strings.ToLower(sig.String()), `  rate: 50
  warmup: 1s
  duration: 30s
rounds: 2`)
			run := tolltest.Start(t, "run", path, "--out", filepath.Join(t.TempDir(), "out"))
			t.Cleanup(func() {
				run.Signal(os.Kill)
				for _, c := range runContainers(t, e, run.Pid()) {
					e.Remove(context.Background(), c.ID)
				}
			})
			// Wait until all four containers run and a trial is under way.
			tolltest.Eventually(60*time.Second, func() bool { return len(runContainers(t, e, run.Pid())) >= 4 })
			if n := len(runContainers(t, e, run.Pid())); n < 4 {
				t.Fatalf("%d containers of the run, want 4\n%s", n, run.Output())
			}
			time.Sleep(time.Second)
			run.Signal(sig)
			run.Wait(t, 45*time.Second)
			left := runContainers(t, e, run.Pid())
			if sig == syscall.SIGINT {
				if len(left) > 0 {
					t.Errorf("after SIGINT, containers left: %+v\n%s", left, run.Output())
				}
				return
			}
			if len(left) == 0 {
				t.Skip("the engine removed every container itself after SIGKILL; nothing for the next run to show")
			}
			// The supervisors killed what was in the services' cgroups:
			// no process of the run is left, though the engine keeps
			// the containers (Podman even calls them "Up": their
			// monitor died with them, and nobody told it).
			id, err := runid.Parse(left[0].Labels[container.LabelRun])
			if err != nil {
				t.Fatal(err)
			}
			var procs map[int]string
			if !tolltest.Eventually(5*time.Second, func() bool {
				procs = tolltest.Labelled(t, id)
				return len(procs) == 0
			}) {
				t.Errorf("after SIGKILL of toll, processes of its run are left: %v", procs)
			}
			// The next run removes them, and says so.
			next := tolltest.Command(t, "run", tolltest.WriteScenario(t, "next", "  - name: baseline", `  rate: 20
  warmup: 1s
  duration: 1s
rounds: 1`), "--out", filepath.Join(t.TempDir(), "next"))
			report, err := next.CombinedOutput()
			if err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInvalid {
					t.Fatalf("the next toll run: %v\n%s", err, report)
				}
			}
			if want := fmt.Sprintf("removed what earlier runs of toll that were killed left: %d containers (%s (%s", len(left), left[0].Name, e.Name); !strings.Contains(string(report), want) {
				t.Errorf("the next run did not say it removed the %d containers (%q):\n%s", len(left), want, report)
			}
			if still := runContainers(t, e, run.Pid()); len(still) > 0 {
				t.Errorf("after toll cleanup, containers left: %+v", still)
			}
		})
	}
}
