// Package kube runs toll's Kubernetes runner against a real cluster: the
// one scripts/kube-cluster.sh starts on this machine, named by the
// kubeconfig in TOLL_KUBECONFIG (`scripts/kube-cluster.sh env` prints it).
// Without it every test skips, saying so. The cluster runs toll's image
// as toll:dev, imported on its node (no registry).
package kube

import (
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestMain lets the test binary act as toll (tolltest.Main).
func TestMain(m *testing.M) {
	tolltest.Main(m, cli.Main)
}
