package kube

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tollperf/toll/scenario"
)

// TestPodFailed checks which container states end the wait for a pod at
// once: an image that cannot be had (pulled, or, with imagePullPolicy
// Never, already on the node) fails the run with the kubelet's reason,
// while a container still being created is waited for.
func TestPodFailed(t *testing.T) {
	for _, tt := range []struct {
		reason string
		fails  bool
	}{
		{"ContainerCreating", false},
		{"ErrImagePull", true},
		{"ImagePullBackOff", true},
		{"ErrImageNeverPull", true},
		{"CrashLoopBackOff", true},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "toll-sink",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: tt.reason, Message: "the kubelet's message"}}}}}}
			p.Name = "sink"
			err := podFailed(p)
			if (err != nil) != tt.fails {
				t.Fatalf("podFailed = %v, want a failure %v", err, tt.fails)
			}
			if err != nil && !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("%v does not say why (%s)", err, tt.reason)
			}
		})
	}
}

// TestUnscheduled checks that a load pod the scheduler could not place
// (kubernetes.load_placement: other-node with no other node) is named
// with the scheduler's reason, and that a placed one is not.
func TestUnscheduled(t *testing.T) {
	s, err := scenario.Read("testdata/limits.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(s, "42-7", "")
	if err != nil {
		t.Fatal(err)
	}
	const why = "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."
	for _, tt := range []struct {
		name      string
		scheduled corev1.ConditionStatus
		want      string
	}{
		{"waiting", corev1.ConditionFalse, ", pod toll-load-t1 not scheduled: " + why},
		{"placed", corev1.ConditionTrue, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			labels := b.Labels("baseline", ComponentLoad)
			labels[LabelTrial] = "1"
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "toll-load-t1", Namespace: b.Namespace(), Labels: labels},
				Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: tt.scheduled, Message: why}}}}
			r := &Runner{Client: fake.NewClientset(pod), b: b}
			if got := r.unscheduled(context.Background(), 1); got != tt.want {
				t.Errorf("unscheduled = %q, want %q", got, tt.want)
			}
			if got := r.unscheduled(context.Background(), 2); got != "" {
				t.Errorf("trial 2 has no pod, unscheduled = %q", got)
			}
		})
	}
}
