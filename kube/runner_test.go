package kube

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
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

// TestStartsOnTwoNodes starts a variant twice, the scheduler putting its
// first pod on one node and its second on another, and checks that the
// manifest's nodes of the variant are both, each once, that a note says
// its services ran on two nodes, and that each start's time from launch
// to ready is the probe's, or none when the probe printed no start.
func TestStartsOnTwoNodes(t *testing.T) {
	s, err := scenario.ReadWith("../examples/quickstart.yaml", scenario.Overrides{Sequential: true})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []string{"node-a", "node-b", "node-a"}
	client := fake.NewClientset()
	scheduled := 0
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		p.Spec.NodeName = "node-s"
		if p.Labels[LabelComponent] == ComponentServices {
			p.Spec.NodeName = nodes[scheduled]
			scheduled++
		}
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		return false, nil, nil
	})
	dir, err := record.CreateExact(filepath.Join(t.TempDir(), "results"))
	if err != nil {
		t.Fatal(err)
	}
	m := &record.Manifest{}
	logs := fakeLogs{}
	r := &Runner{Client: client, Logs: logs, Poll: time.Millisecond, ScheduleTimeout: time.Second, StartLineWait: 20 * time.Millisecond, Host: "h"}
	if err := r.Setup(context.Background(), backend.Run{Scenario: s, ID: runid.ID{Pid: 42, Start: 7}, Dir: dir, Manifest: m}); err != nil {
		t.Fatal(err)
	}
	launched := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	for i, ms := range []int{120, 80} { // the third start's probe prints nothing
		var b strings.Builder
		for _, svc := range []string{"provider", "consumer"} {
			ready := launched.Add(time.Duration(ms) * time.Millisecond)
			js, _ := json.Marshal(StartLine{Time: ready, Start: ServiceStart{Service: svc, Launched: launched, PortOpen: ready, Ready: ready}})
			b.Write(append(js, '\n'))
		}
		logs[r.b.PodName("otel", i+1)+"/"+ProbeContainer] = b.String()
	}
	tests := []struct {
		node     string
		startupS float64 // the consumer's; 0: not timed
		nodes    record.NodeSet
	}{
		{"node-a", 0.12, record.NodeSet{"node-a"}},
		{"node-b", 0.08, record.NodeSet{"node-a", "node-b"}},
		{"node-a", 0, record.NodeSet{"node-a", "node-b"}},
	}
	for i, tt := range tests {
		if err := r.Start(context.Background(), "otel", 0); err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
		if r.nodes["otel"] != tt.node {
			t.Errorf("start %d: node %q, want %q", i+1, r.nodes["otel"], tt.node)
		}
		if got, ok := r.startup["otel"]["consumer"]; ok != (tt.startupS > 0) || math.Abs(got-tt.startupS) > 1e-9 {
			t.Errorf("start %d: consumer's start-up %gs (timed %v), want %gs", i+1, got, ok, tt.startupS)
		}
		if got := m.Layout.Kubernetes.Nodes["otel"]; !slices.Equal(got, tt.nodes) {
			t.Errorf("start %d: manifest nodes of otel %v, want %v", i+1, got, tt.nodes)
		}
		if err := r.Stop(context.Background(), "otel"); err != nil {
			t.Fatal(err)
		}
	}
	var moved, untimed int
	for _, n := range m.Notes {
		if strings.Contains(n, "variant otel's services ran on 2 nodes (node-a, node-b)") {
			moved++
		}
		if strings.Contains(n, "variant otel, start 3: no start-up recorded") {
			untimed++
		}
	}
	if moved != 1 || untimed != 1 {
		t.Errorf("manifest notes %q: want one saying otel ran on two nodes, one that start 3 was not timed", m.Notes)
	}
}
