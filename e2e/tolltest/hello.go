package tolltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// HelloClasses compiles testdata/Hello.java beside this file, a minimal
// Java HTTP service, into a temporary directory and returns it; the test
// is skipped where there is no JDK.
func HelloClasses(t *testing.T) string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no javac: ", err)
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find tolltest's own directory for testdata/Hello.java")
	}
	src := filepath.Join(filepath.Dir(self), "testdata", "Hello.java")
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return classes
}

// HelloScenario writes a scenario of Hello (compiled by HelloClasses) as
// its one measured service, with a baseline and a variant on the serial
// collector, and returns its path: head holds the settings before the
// services (mode, restart), load the load: block and what follows it.
func HelloScenario(t *testing.T, head, load string) string {
	t.Helper()
	s := head + fmt.Sprintf(`services:
  - name: hello
    command: [sh, -c, "exec java -Xmx64m $JOPTS -cp %s Hello ${port:hello} 600"]
    ready: {http: "http://127.0.0.1:${port:hello}/", timeout: 20s}
    measure: true
variants:
  - name: baseline
  - name: serial
    services:
      hello: {env: {JOPTS: "-XX:+UseSerialGC"}}
`, HelloClasses(t)) + load
	path := filepath.Join(t.TempDir(), "hello.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
