package tolltest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reproductions is examples/reproductions, from the directory of a test
// package in e2e/, where go test runs its tests.
const reproductions = "../../examples/reproductions"

// Reproduction is one published benchmark's scenario and what its short
// version's layout must show.
type Reproduction struct {
	// File is the scenario's file in examples/reproductions, and Layout
	// the name of its report layout.
	File, Layout string
	// Short are the toll run flags of its short version.
	Short []string
	// Java says it runs the Spring Boot example with the OpenTelemetry
	// agent; Root that it needs root (network: isolated, bpftrace).
	Java, Root bool
	// Programs are what its services run that may not be installed.
	Programs []string
	// Rows are texts the layout must print: its rows and columns.
	Rows []string
}

// RunReproduction runs, from a test package in e2e/, the short version of
// a scenario of examples/reproductions in place (its services' paths are
// relative to it), then checks that `toll report --layout` prints the benchmark's rows
// and that report.md ends with the same layout (the scenario's
// report.layout). A run that its trials' flags make invalid (exit 3, a busy
// machine missing the rate) still has its tables; any other failure fails.
func RunReproduction(t *testing.T, r Reproduction) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs services under load")
	}
	if r.Java {
		java, err := filepath.Abs("../../examples/java")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"target/toll-java-example.jar", "agents/opentelemetry-javaagent.jar"} {
			if _, err := os.Stat(filepath.Join(java, f)); err != nil {
				msg := fmt.Sprintf("no examples/java/%s: run examples/java/fetch-agents.sh and examples/java/build.sh (.ci/run does)", f)
				if os.Getenv("CI") == "true" {
					t.Fatal(msg)
				}
				t.Skip(msg)
			}
		}
	}
	if r.Root && os.Geteuid() != 0 {
		t.Skip("needs root (network: isolated, bpftrace)")
	}
	for _, p := range r.Programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("needs %s: %v", p, err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	args := append([]string{"run", filepath.Join(reproductions, r.File), "--out", out, "-q"}, r.Short...)
	cmd := Command(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch code := ExitCode(err); code {
	case 0:
	case exitInvalid:
		t.Logf("the run is invalid (a busy machine?); its tables are still checked:\n%s", stderr.String())
	default:
		t.Fatalf("toll %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}

	rep := Command(t, "report", "--from-summary", "--layout", r.Layout, out)
	var layout bytes.Buffer
	rep.Stdout, rep.Stderr = &layout, &stderr
	if code := ExitCode(rep.Run()); code != 0 && code != exitInvalid {
		t.Fatalf("toll report --layout %s: exit %d\n%s", r.Layout, code, stderr.String())
	}
	for _, row := range r.Rows {
		if !strings.Contains(layout.String(), row) {
			t.Errorf("layout %s lacks %q:\n%s", r.Layout, row, layout.String())
		}
	}
	// An interval is its bounds ("[+5.6%, +36.2%]") or a difference's
	// half-width ("± 0.12").
	if !regexp.MustCompile(`\[[-+][0-9.]+%, [-+][0-9.]+%\]|± [0-9]`).MatchString(layout.String()) {
		t.Errorf("layout %s shows no interval:\n%s", r.Layout, layout.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	title, _, _ := strings.Cut(layout.String(), "\n")
	if !strings.Contains(string(md), "\n"+title+"\n") {
		t.Errorf("report.md lacks the scenario's layout %q", title)
	}
}
