package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/kubetest"
	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/record"
)

// quickstart is the scenario the tests run on the cluster.
const quickstart = "../../examples/quickstart.yaml"

// runArgs are the arguments of a short run of a scenario (the quickstart
// or one like it) on the cluster.
func runArgs(kubeconfig, out string, rounds int, scenarioPath string) []string {
	return append(append([]string{"run"}, kubetest.KubeArgs(kubeconfig, out)...),
		"--sequential", "--restart", "once", "--rounds", strconv.Itoa(rounds), "--warmup", "1s", "--duration", "3s", scenarioPath)
}

// TestQuickstartOnCluster runs the quickstart, one variant at a time, on
// the cluster: the results directory holds every trial with its load and
// the consumer's samples, toll report reads it, the manifest says where
// the variants ran, and the run leaves no object behind. Each trial's
// progress line gives the CPU its table row does (the analysis window's,
// not the probe's whole span around the load), each trial names its
// node, and each variant's first trial holds its start, timed by the
// probe.
//
// The scenario's trims are 0, so the analysis window is the measured one.
func TestQuickstartOnCluster(t *testing.T) {
	kubeconfig, c := kubetest.Cluster(t)
	kubetest.Empty(t, c)
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := tolltest.Run(t, runArgs(kubeconfig, out, 2, quickstart)...)
	if code != 0 {
		t.Fatalf("toll run --kubernetes: exit %d\n%s\n%s", code, stdout, stderr)
	}
	trials := tolltest.ReadTrials(t, out)
	if len(trials) != 4 { // 2 rounds × 2 variants
		t.Fatalf("%d trials, want 4", len(trials))
	}
	m := kubetest.ReadManifest(t, out)
	progress := map[int]string{}
	for _, mm := range progressCPU.FindAllStringSubmatch(stdout+stderr, -1) {
		progress[atoi(t, mm[1])] = mm[2]
	}
	for _, tr := range trials {
		if tr.Interrupted || tr.Load.OK == 0 {
			t.Errorf("trial %d (%s): interrupted %v (%s), %d OK requests", tr.Index, tr.Variant, tr.Interrupted, tr.Error, tr.Load.OK)
		}
		tc, err := analyze.SummarizeTrial(tr, analyze.Trim{})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%.3f", tc.Costs[analyze.CPUCores]); progress[tr.Index] != want {
			t.Errorf("trial %d (%s): progress line CPU %q cores, its analysis %s", tr.Index, tr.Variant, progress[tr.Index], want)
		}
		if tr.Node == "" || !slices.Contains(m.Layout.Kubernetes.Nodes[tr.Variant], tr.Node) {
			t.Errorf("trial %d (%s): node %q, not among the manifest's %v", tr.Index, tr.Variant, tr.Node, m.Layout.Kubernetes.Nodes)
		}
		for _, sr := range tr.Services {
			// restart: once: the first round's trials hold the start.
			if first := tr.Round == 1; sr.Started != first || (first && (sr.StartupS <= 0 || sr.StartupS > 10)) {
				t.Errorf("trial %d (%s, round %d), %s: started %v, start-up %gs; want a start timed in round 1 only", tr.Index, tr.Variant, tr.Round, sr.Name, sr.Started, sr.StartupS)
			}
		}
		var consumer *record.ServiceSeries
		for i := range tr.Samples {
			if tr.Samples[i].Service == "consumer" {
				consumer = &tr.Samples[i]
			}
		}
		if consumer == nil || len(consumer.Points) < 2 || consumer.Points[len(consumer.Points)-1].CPU <= consumer.Points[0].CPU {
			t.Errorf("trial %d (%s): the probe's samples of the consumer show no CPU: %+v", tr.Index, tr.Variant, consumer)
		}
		if tr.Variant == "otel" && len(tr.Telemetry) == 0 {
			t.Errorf("trial %d (otel): no telemetry sample from its sink", tr.Index)
		}
	}
	if m.Layout.Place != "kubernetes" || m.Layout.Kubernetes == nil || len(m.Layout.Kubernetes.Nodes["baseline"]) == 0 || len(m.Layout.Kubernetes.Nodes["otel"]) == 0 {
		t.Errorf("manifest layout %+v: want the node of each variant", m.Layout)
	}
	code, report, stderr := tolltest.Run(t, "report", out)
	if code != 0 || !strings.Contains(report, "otel") {
		t.Errorf("toll report: exit %d\n%s\n%s", code, report, stderr)
	}
	sum := tolltest.ReadSummary(t, out)
	for _, v := range []string{"baseline", "otel"} {
		if ms := sum.Value(t, v, "startup_ms"); ms <= 0 {
			t.Errorf("%s: startup_ms %g, want the probe's time from launch to ready", v, ms)
		}
	}
	if left := kubetest.Gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
}

// progressCPU matches a trial's progress line: its index and its CPU.
var progressCPU = regexp.MustCompile(`\[(\d+)/\d+\] round \d+ .*  CPU ([0-9.]+) cores`)

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGCAfterKilledRun kills toll's CLI during a run on the cluster
// (SIGKILL: nothing of toll cleans up) and checks that the run's objects
// are there, and that `toll k8s gc` deletes every one.
func TestGCAfterKilledRun(t *testing.T) {
	kubeconfig, c := kubetest.Cluster(t)
	kubetest.Empty(t, c)
	run := tolltest.Start(t, runArgs(kubeconfig, filepath.Join(t.TempDir(), "results"), 2, quickstart)...)
	// Kill it once its first load Job exists: sinks, Services, a variant's
	// pod and a Job are then all in the cluster.
	var seen []string
	if !tolltest.Eventually(tolltest.Patience(t, 3*time.Minute), func() bool {
		seen = kubetest.Objects(t, c)
		return strings.Contains(strings.Join(seen, " "), "job/")
	}) {
		t.Fatalf("no load Job within the patience; objects %v\n%s", seen, run.Output())
	}
	run.Signal(syscall.SIGKILL)
	run.Wait(t, 30*time.Second)
	if left := kubetest.Objects(t, c); len(left) < 4 {
		t.Fatalf("after SIGKILL, %v: want the run's sinks, Services, pod and Job still there", left)
	}
	code, stdout, stderr := tolltest.Run(t, "k8s", "gc", "--kubeconfig", kubeconfig, "-n", "default")
	if code != 0 || !strings.Contains(stdout, "deleted job/") || !strings.Contains(stdout, "deleted service/") {
		t.Fatalf("toll k8s gc: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if left := kubetest.Gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after toll k8s gc: %v\ngc said:\n%s", left, stdout)
	}
}

// twoNodes skips the test unless the cluster has at least two Ready nodes.
func twoNodes(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	nodes, err := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ready []string
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready = append(ready, n.Name)
			}
		}
	}
	if len(ready) < 2 {
		t.Skipf("the cluster has %d Ready node(s) %v; this test needs two (scripts/kube-cluster.sh up --nodes 2)", len(ready), ready)
	}
}

// runPlaced runs one round of the quickstart with block (a kubernetes
// block) added to it, checks that every trial served its load and that
// the run left nothing, and returns the run's manifest.
func runPlaced(t *testing.T, kubeconfig string, c kubernetes.Interface, block string) record.Manifest {
	t.Helper()
	kubetest.Empty(t, c)
	src, err := os.ReadFile(quickstart)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "quickstart.yaml")
	if err := os.WriteFile(path, append(src, "\n"+block...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	// Exit 3 (an invalid run: a trial that missed its rate on this busy
	// machine) still placed every pod; where they ran is what is checked.
	code, stdout, stderr := tolltest.Run(t, runArgs(kubeconfig, out, 1, path)...)
	if code != cli.ExitOK && code != cli.ExitInvalid {
		t.Fatalf("toll run --kubernetes: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tr := range tolltest.ReadTrials(t, out) {
		if tr.Interrupted || tr.Load.OK == 0 {
			t.Errorf("trial %d (%s): interrupted %v (%s), %d OK requests", tr.Index, tr.Variant, tr.Interrupted, tr.Error, tr.Load.OK)
		}
	}
	if left := kubetest.Gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
	m := kubetest.ReadManifest(t, out)
	t.Logf("pods' nodes, from the manifest:")
	for _, p := range m.Layout.Kubernetes.Pods {
		t.Logf("  %-8s %-8s trial %d  %s  %s", p.Component, p.Variant, p.Trial, p.Node, p.Name)
	}
	return m
}

// TestLoadOnAnotherNode runs the quickstart with its load Jobs required on
// another node than its services (kubernetes.load_placement: other-node),
// as a tester host apart from the measured hosts: the manifest records
// every pod's node, and no load pod shares one with a service pod.
func TestLoadOnAnotherNode(t *testing.T) {
	kubeconfig, c := kubetest.Cluster(t)
	twoNodes(t, c)
	m := runPlaced(t, kubeconfig, c, "kubernetes:\n  load_placement: other-node\n")
	services, loads := map[string]bool{}, 0
	for _, p := range m.Layout.Kubernetes.Pods {
		if p.Node == "" {
			t.Errorf("pod %s: no node in the manifest", p.Name)
		}
		if p.Component == kube.ComponentServices {
			services[p.Node] = true
		}
	}
	for _, p := range m.Layout.Kubernetes.Pods {
		if p.Component == kube.ComponentLoad {
			loads++
			if services[p.Node] {
				t.Errorf("load pod %s (trial %d) ran on %s, a node of the service pods %v", p.Name, p.Trial, p.Node, services)
			}
		}
	}
	if len(services) == 0 || loads != 2 { // 1 round × 2 variants
		t.Errorf("manifest pods %+v: want the service pods and 2 load pods", m.Layout.Kubernetes.Pods)
	}
	if m.Layout.Kubernetes.LoadPlacement != "other-node" {
		t.Errorf("manifest load_placement %q, want other-node", m.Layout.Kubernetes.LoadPlacement)
	}
}

// TestNodePerVariant runs the quickstart with kubernetes.placement:
// node-per-variant: the manifest shows baseline and otel on different
// nodes.
func TestNodePerVariant(t *testing.T) {
	kubeconfig, c := kubetest.Cluster(t)
	twoNodes(t, c)
	m := runPlaced(t, kubeconfig, c, "kubernetes:\n  placement: node-per-variant\n")
	nodes := m.Layout.Kubernetes.Nodes
	if len(nodes["baseline"]) != 1 || len(nodes["otel"]) != 1 || nodes["baseline"][0] == nodes["otel"][0] {
		t.Errorf("variants' nodes %v: want baseline and otel each on a node of its own", nodes)
	}
	for _, p := range m.Layout.Kubernetes.Pods {
		if p.Component == kube.ComponentServices && !slices.Contains(nodes[p.Variant], p.Node) {
			t.Errorf("service pod %s on %s, the manifest's nodes say %s", p.Name, p.Node, nodes[p.Variant])
		}
	}
}
