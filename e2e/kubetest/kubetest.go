// Package kubetest holds what the end-to-end tests on the project's real
// cluster share (e2e/kube, e2e/kubejvm): the cluster named by
// TOLL_KUBECONFIG (`scripts/kube-cluster.sh env` prints it), the arguments
// of a run on it, and the objects toll leaves there. Without the variable
// every test skips, saying so.
package kubetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/record"
)

// KubeconfigEnv names the kubeconfig of the cluster the tests run on.
const KubeconfigEnv = "TOLL_KUBECONFIG"

// TollImage is toll's image as scripts/kube-cluster.sh imports it.
const TollImage = "toll:dev"

// lockWait bounds how long a test waits for another's hold on the cluster:
// the longest test on it takes about two minutes.
const lockWait = 8 * time.Minute

// Cluster returns the kubeconfig's path and a client of its cluster, or
// skips the test when there is none. The test holds the cluster alone
// until it ends: `go test ./...` runs e2e/kube and e2e/kubejvm at the same
// time, and each test checks that it starts on a cluster without toll's
// objects and leaves none.
func Cluster(t *testing.T) (string, kubernetes.Interface) {
	t.Helper()
	path := os.Getenv(KubeconfigEnv)
	if path == "" {
		t.Skipf("%s is not set: no real cluster to run on (scripts/kube-cluster.sh up, then eval \"$(scripts/kube-cluster.sh env)\")", KubeconfigEnv)
	}
	hold(t, filepath.Join(filepath.Dir(path), "e2e.lock"))
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

// hold takes an exclusive lock on the file at path for the rest of the
// test, waiting up to lockWait for the test that holds it.
func hold(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("the cluster's test lock: %v", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK || time.Now().After(deadline) {
			f.Close()
			t.Fatalf("the cluster's test lock %s: %v (another test held it for %s)", path, err, lockWait)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}

// KubeArgs are the arguments every run on the cluster takes: its
// kubeconfig, toll's imported image, and the results directory out.
func KubeArgs(kubeconfig, out string) []string {
	return []string{"--kubernetes", "--kubeconfig", kubeconfig, "--toll-image", TollImage, "--image-pull-policy", "Never", "--out", out}
}

// Objects lists the names of toll's pods, Services and Jobs in the
// default namespace.
func Objects(t *testing.T, c kubernetes.Interface) []string {
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

// Empty fails the test at once when the cluster holds toll's objects
// before it runs anything.
func Empty(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	if left := Objects(t, c); len(left) > 0 {
		t.Fatalf("the cluster holds toll's objects before the run: %v", left)
	}
}

// Gone waits, up to d, until no object of toll is left, and returns those
// still there (a deleted pod is listed until its containers stopped).
func Gone(t *testing.T, c kubernetes.Interface, d time.Duration) []string {
	t.Helper()
	var left []string
	tolltest.Eventually(tolltest.Patience(t, d), func() bool {
		left = Objects(t, c)
		return len(left) == 0
	})
	return left
}

// ReadManifest reads the manifest of results directory out, which must
// say where the run's pods ran.
func ReadManifest(t *testing.T, out string) record.Manifest {
	t.Helper()
	var m record.Manifest
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Layout.Kubernetes == nil {
		t.Fatalf("manifest layout %+v: no kubernetes block", m.Layout)
	}
	return m
}
