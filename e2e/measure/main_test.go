package measure

import (
	"os/exec"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestMain lets the test binary act as toll (tolltest.Main).
func TestMain(m *testing.M) {
	tolltest.Main(m, cli.Main)
}

// helloClasses compiles testdata/Hello.java, a minimal Java HTTP service,
// into a temporary directory and returns it; the test is skipped where
// there is no JDK.
func helloClasses(t *testing.T) string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no javac: ", err)
	}
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, "testdata/Hello.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return classes
}
