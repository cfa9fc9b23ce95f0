package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
