package kube

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/kubetest"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestStartupOnCluster runs a start-up experiment on the cluster, three
// cold starts of each variant's pod, each service limited to half a core:
// every start is a trial with each service's time to ready, port open,
// CPU and RSS at ready, read from toll's probe inside the pod, and the
// figure asked of the consumer's log; toll report and toll compare read
// the results, and no pod is left.
func TestStartupOnCluster(t *testing.T) {
	kubeconfig, c := kubetest.Cluster(t)
	kubetest.Empty(t, c)
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := tolltest.Run(t, append(append([]string{"run"}, kubetest.KubeArgs(kubeconfig, out)...), "testdata/startup.yaml")...)
	if code != cli.ExitOK && code != cli.ExitInvalid {
		t.Fatalf("toll run --kubernetes (start-up): exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "6 cold starts (2 variants × 3 repetitions × 1 steps) in kubernetes") {
		t.Errorf("progress does not announce 6 cold starts in the cluster:\n%s", stderr)
	}
	trials := tolltest.ReadTrials(t, out)
	if len(trials) != 6 {
		t.Fatalf("%d trials, want 6 (2 variants × 3 starts)", len(trials))
	}
	var cpu float64 // the consumers', over every start: a start may take less than the 10 ms a CPU tick counts
	for _, tr := range trials {
		su := tr.Startup
		if su == nil || su.Failed || tr.Interrupted || su.CPULimit != 0.5 || len(su.Services) != 2 {
			t.Errorf("start %d (%s): %+v (%s)", tr.Index, tr.Variant, su, tr.Error)
			continue
		}
		for _, ss := range su.Services {
			if !(ss.ReadyS > 0 && ss.ReadyS < 30 && ss.PortOpenS > 0 && ss.PortOpenS <= ss.ReadyS && ss.CPUS >= 0 && ss.RSSBytes > 1<<20) {
				t.Errorf("start %d (%s), service %s: ready %.3f s, port open %.3f s, CPU %.3f s, RSS %d: want a timed start", tr.Index, tr.Variant, ss.Name, ss.ReadyS, ss.PortOpenS, ss.CPUS, ss.RSSBytes)
			}
			if ss.Name == "consumer" {
				cpu += ss.CPUS
			}
			if ss.Name == "consumer" && ss.LogMetrics["listening_port_n"] == 0 {
				t.Errorf("start %d (%s): the consumer's log metrics %v, want its port", tr.Index, tr.Variant, ss.LogMetrics)
			}
		}
		t.Logf("start %d (%s): consumer ready %.3f s (port %.3f s), CPU %.3f s, RSS %.1f MiB", tr.Index, tr.Variant,
			su.Services[1].ReadyS, su.Services[1].PortOpenS, su.Services[1].CPUS, float64(su.Services[1].RSSBytes)/(1<<20))
	}
	if cpu <= 0 {
		t.Errorf("no CPU until ready in any of the consumer's starts")
	}
	m := kubetest.ReadManifest(t, out)
	if m.Workload != "startup" || len(m.Layout.Kubernetes.Pods) < 2+6 {
		t.Errorf("manifest: workload %q, %d pods recorded; want startup and the 2 sinks and 6 starts", m.Workload, len(m.Layout.Kubernetes.Pods))
	}
	tolltest.ReportAndCompare(t, out, []string{"start-up: launch → ready (s)", "start-up: CPU until ready (s)"}, "start-up")
	if left := kubetest.Gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
}

// TestAAOnCluster runs the quickstart's baseline against itself on the
// cluster (--aa): the twin's CPU per request reads as no change (~). An
// interval at 95% misses an A/A twin's true change of 0 in one run in 20
// by design, so a change read once is checked by a second run: the test
// fails only when both read a change in the same direction, as a twin
// systematically unlike its baseline (a pod placed or limited otherwise)
// would, and an honest run does by chance once in some 800.
func TestAAOnCluster(t *testing.T) {
	kubeconfig, c := kubetest.Cluster(t)
	kubetest.Empty(t, c)
	var first tolltest.Delta
	for run := 1; run <= 2; run++ {
		d, stdout := aaOnCluster(t, kubeconfig, filepath.Join(t.TempDir(), "results"))
		t.Logf("run %d: baseline-again's CPU per request: %s", run, d.String())
		if d.Verdict == "~" {
			break
		}
		if run == 1 {
			first = d
			continue
		}
		if sameSide(first, d) {
			t.Errorf("two A/A runs on the cluster read %s and %s for the twin's CPU per request, want ~\n%s", first.String(), d.String(), stdout)
		}
	}
	if left := kubetest.Gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
}

// aaOnCluster runs one A/A run of the quickstart on the cluster of
// kubeconfig, its results in out, and returns the twin's CPU per request
// and the run's output.
func aaOnCluster(t *testing.T, kubeconfig, out string) (tolltest.Delta, string) {
	t.Helper()
	args := append([]string{"run", "--aa"}, runArgs(kubeconfig, out, 4, quickstart)[1:]...)
	code, stdout, stderr := tolltest.Run(t, args...)
	if code != cli.ExitOK && code != cli.ExitInvalid {
		t.Fatalf("toll run --kubernetes --aa: exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := tolltest.ReadSummary(t, out)
	return s.Delta(t, "baseline-again", "cpu_per_request_ms"), stdout
}

// sameSide reports whether two changes read the same direction (both
// intervals above 0, or both below).
func sameSide(a, b tolltest.Delta) bool {
	above := func(d tolltest.Delta) bool { return d.CILow != nil && *d.CILow > 0 }
	below := func(d tolltest.Delta) bool { return d.CIHigh != nil && *d.CIHigh < 0 }
	return above(a) && above(b) || below(a) && below(b)
}
