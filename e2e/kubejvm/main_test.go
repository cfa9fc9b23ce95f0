// Package kubejvm runs JVMs on the project's real cluster, apart from
// e2e/kube's tests, so that each package's tests end well within go test's
// ten minutes on a busy machine: the OpenTelemetry Java agent on the Java
// example's service, and a job experiment, in the JVM image
// scripts/kube-cluster.sh builds from this machine's JDK (toll-java:dev).
// Without TOLL_KUBECONFIG, or without the Java example's jars, every test
// skips, saying why.
package kubejvm

import (
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestMain lets the test binary act as toll (tolltest.Main).
func TestMain(m *testing.M) {
	tolltest.Main(m, cli.Main)
}
