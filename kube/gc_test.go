package kube

import (
	"context"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tollperf/toll/runid"
)

// leave creates a pod, a Service and a Job labelled as run's, started
// from host.
func leave(t *testing.T, c kubernetes.Interface, run, host string) {
	t.Helper()
	ctx := context.Background()
	meta := metav1.ObjectMeta{Name: "x-" + run + "-" + host, Namespace: "perf",
		Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRun: run, LabelHost: host}}
	if _, err := c.CoreV1().Pods("perf").Create(ctx, &corev1.Pod{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Services("perf").Create(ctx, &corev1.Service{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchV1().Jobs("perf").Create(ctx, &batchv1.Job{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func runsLeft(t *testing.T, c kubernetes.Interface) []string {
	t.Helper()
	ctx := context.Background()
	var runs []string
	pods, _ := c.CoreV1().Pods("perf").List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		runs = append(runs, "pod:"+p.Labels[LabelRun])
	}
	svcs, _ := c.CoreV1().Services("perf").List(ctx, metav1.ListOptions{})
	for _, s := range svcs.Items {
		runs = append(runs, "service:"+s.Labels[LabelRun])
	}
	jobs, _ := c.BatchV1().Jobs("perf").List(ctx, metav1.ListOptions{})
	for _, j := range jobs.Items {
		runs = append(runs, "job:"+j.Labels[LabelRun])
	}
	slices.Sort(runs)
	return runs
}

// TestGC checks that gc deletes, from the labels alone, the objects of a
// run started here whose toll is gone, and keeps a live run's and those of
// runs started on another machine unless told.
func TestGC(t *testing.T) {
	self, err := runid.Self()
	if err != nil {
		t.Fatal(err)
	}
	live := RunLabel(self)
	dead := RunLabel(runid.ID{Pid: self.Pid, Start: self.Start + 1}) // same pid, another start: gone
	c := fake.NewClientset()
	leave(t, c, live, "here")
	leave(t, c, dead, "here")
	leave(t, c, dead, "elsewhere")
	// An object of someone else's in the namespace is never touched.
	if _, err := c.CoreV1().Pods("perf").Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "perf"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	deleted, kept, err := GC(context.Background(), c, "perf", GCOptions{Host: "here"})
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 3 {
		t.Errorf("deleted %v, want the dead run's pod, Service and Job from this host", deleted)
	}
	for _, o := range deleted {
		if o.Run != dead || o.Name != "x-"+dead+"-here" {
			t.Errorf("deleted %s of run %s", o, o.Run)
		}
	}
	slices.Sort(kept)
	if len(kept) != 2 {
		t.Errorf("kept %v, want the live run and the one from elsewhere", kept)
	}
	want := []string{"job:" + dead, "job:" + live, "pod:", "pod:" + dead, "pod:" + live, "service:" + dead, "service:" + live}
	slices.Sort(want)
	if got := runsLeft(t, c); !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}

	if _, _, err := GC(context.Background(), c, "perf", GCOptions{Run: live}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := GC(context.Background(), c, "perf", GCOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	if got := runsLeft(t, c); !slices.Equal(got, []string{"pod:"}) {
		t.Errorf("after --run and --all, left %v; want only the pod that is not toll's", got)
	}
}

func TestRunLabelRoundTrip(t *testing.T) {
	id := runid.ID{Pid: 4242, Start: 987654321}
	got, err := ParseRunLabel(RunLabel(id))
	if err != nil || got != id {
		t.Errorf("ParseRunLabel(RunLabel(%v)) = %v, %v", id, got, err)
	}
	if _, err := ParseRunLabel("render"); err == nil {
		t.Error("a label that names no run parsed")
	}
}
