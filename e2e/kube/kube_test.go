package kube

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/record"
)

// KubeconfigEnv names the kubeconfig of the cluster the tests run on.
const KubeconfigEnv = "TOLL_KUBECONFIG"

// tollImage is toll's image as scripts/kube-cluster.sh imports it.
const tollImage = "toll:dev"

// cluster returns the kubeconfig's path and a client of its cluster, or
// skips the test when there is none.
func cluster(t *testing.T) (string, kubernetes.Interface) {
	t.Helper()
	path := os.Getenv(KubeconfigEnv)
	if path == "" {
		t.Skipf("%s is not set: no real cluster to run on (scripts/kube-cluster.sh up, then eval \"$(scripts/kube-cluster.sh env)\")", KubeconfigEnv)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("%s=%s: %v", KubeconfigEnv, path, err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return path, c
}

// runArgs are the arguments of a short quickstart on the cluster.
func runArgs(kubeconfig, out string) []string {
	return []string{"run", "--kubernetes", "--kubeconfig", kubeconfig, "--toll-image", tollImage, "--image-pull-policy", "Never",
		"--sequential", "--restart", "once", "--rounds", "2", "--warmup", "1s", "--duration", "3s", "--out", out, "../../examples/quickstart.yaml"}
}

// objects lists the names of toll's pods, Services and Jobs in the
// default namespace.
func objects(t *testing.T, c kubernetes.Interface) []string {
	t.Helper()
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedBy}
	var names []string
	pods, err := c.CoreV1().Pods("default").List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		names = append(names, "pod/"+p.Name)
	}
	svcs, err := c.CoreV1().Services("default").List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		names = append(names, "service/"+s.Name)
	}
	jobs, err := c.BatchV1().Jobs("default").List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		names = append(names, "job/"+j.Name)
	}
	return names
}

// gone waits, up to d, until no object of toll is left, and returns those
// still there (a deleted pod is listed until its containers stopped).
func gone(t *testing.T, c kubernetes.Interface, d time.Duration) []string {
	t.Helper()
	var left []string
	tolltest.Eventually(tolltest.Patience(t, d), func() bool {
		left = objects(t, c)
		return len(left) == 0
	})
	return left
}

// TestQuickstartOnCluster runs the quickstart, one variant at a time, on
// the cluster: the results directory holds every trial with its load and
// the consumer's samples, toll report reads it, the manifest says where
// the variants ran, and the run leaves no object behind.
func TestQuickstartOnCluster(t *testing.T) {
	kubeconfig, c := cluster(t)
	if left := objects(t, c); len(left) > 0 {
		t.Fatalf("the cluster holds toll's objects before the run: %v", left)
	}
	out := filepath.Join(t.TempDir(), "results")
	code, stdout, stderr := tolltest.Run(t, runArgs(kubeconfig, out)...)
	if code != 0 {
		t.Fatalf("toll run --kubernetes: exit %d\n%s\n%s", code, stdout, stderr)
	}
	trials := tolltest.ReadTrials(t, out)
	if len(trials) != 4 { // 2 rounds × 2 variants
		t.Fatalf("%d trials, want 4", len(trials))
	}
	for _, tr := range trials {
		if tr.Interrupted || tr.Load.OK == 0 {
			t.Errorf("trial %d (%s): interrupted %v (%s), %d OK requests", tr.Index, tr.Variant, tr.Interrupted, tr.Error, tr.Load.OK)
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
	var m record.Manifest
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Layout.Place != "kubernetes" || m.Layout.Kubernetes == nil || m.Layout.Kubernetes.Nodes["baseline"] == "" || m.Layout.Kubernetes.Nodes["otel"] == "" {
		t.Errorf("manifest layout %+v: want the node of each variant", m.Layout)
	}
	code, report, stderr := tolltest.Run(t, "report", out)
	if code != 0 || !strings.Contains(report, "otel") {
		t.Errorf("toll report: exit %d\n%s\n%s", code, report, stderr)
	}
	if left := gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after the run: %v", left)
	}
}

// TestGCAfterKilledRun kills toll's CLI during a run on the cluster
// (SIGKILL: nothing of toll cleans up) and checks that the run's objects
// are there, and that `toll k8s gc` deletes every one.
func TestGCAfterKilledRun(t *testing.T) {
	kubeconfig, c := cluster(t)
	if left := objects(t, c); len(left) > 0 {
		t.Fatalf("the cluster holds toll's objects before the run: %v", left)
	}
	run := tolltest.Start(t, runArgs(kubeconfig, filepath.Join(t.TempDir(), "results"))...)
	// Kill it once its first load Job exists: sinks, Services, a variant's
	// pod and a Job are then all in the cluster.
	var seen []string
	if !tolltest.Eventually(tolltest.Patience(t, 3*time.Minute), func() bool {
		seen = objects(t, c)
		return strings.Contains(strings.Join(seen, " "), "job/")
	}) {
		t.Fatalf("no load Job within the patience; objects %v\n%s", seen, run.Output())
	}
	run.Signal(syscall.SIGKILL)
	run.Wait(t, 30*time.Second)
	if left := objects(t, c); len(left) < 4 {
		t.Fatalf("after SIGKILL, %v: want the run's sinks, Services, pod and Job still there", left)
	}
	code, stdout, stderr := tolltest.Run(t, "k8s", "gc", "--kubeconfig", kubeconfig, "-n", "default")
	if code != 0 || !strings.Contains(stdout, "deleted job/") || !strings.Contains(stdout, "deleted service/") {
		t.Fatalf("toll k8s gc: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if left := gone(t, c, time.Minute); len(left) > 0 {
		t.Errorf("left after toll k8s gc: %v\ngc said:\n%s", left, stdout)
	}
}
