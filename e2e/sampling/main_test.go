package sampling

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestMain lets the test binary act as toll (tolltest.Main).
func TestMain(m *testing.M) {
	tolltest.Main(m, cli.Main)
}

// helloClasses compiles ../measure/testdata/Hello.java, a minimal Java HTTP service,
// into a temporary directory and returns it; the test is skipped where
// there is no JDK.
func helloClasses(t *testing.T) string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no javac: ", err)
	}
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, "../measure/testdata/Hello.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return classes
}

// helloScenario writes a scenario of Hello (compiled by helloClasses) as
// its one measured service, with a baseline and a variant on the serial
// collector, and returns its path: head holds the settings before the
// services (mode, restart), load the load: block and what follows it.
func helloScenario(t *testing.T, head, load string) string {
	t.Helper()
	s := head + fmt.Sprintf(`services:
  - name: hello
    command: [sh, -c, "exec java -Xmx64m $JOPTS -cp %s Hello ${port:hello}"]
    ready: {http: "http://127.0.0.1:${port:hello}/", timeout: 20s}
    measure: true
variants:
  - name: baseline
  - name: serial
    services:
      hello: {env: {JOPTS: "-XX:+UseSerialGC"}}
`, helloClasses(t)) + load
	path := filepath.Join(t.TempDir(), "hello.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
