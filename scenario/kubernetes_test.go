package scenario

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseKubernetes checks the kubernetes block: its defaults, and every
// bad value refused with its file, line and field.
func TestParseKubernetes(t *testing.T) {
	lines := strings.Count(good, "\n")
	s, err := parse("demo.yaml", []byte(good+"kubernetes: {images: {provider: app:1}}\n"), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	k := s.Kubernetes
	if k.Namespace != "default" || k.TollImage != DefaultTollImage || k.Placement != PlacementSameNode || k.LoadPods != 1 || k.LoadPlacement != LoadPlacementPreferOtherNode {
		t.Errorf("defaults: %+v", k)
	}
	tests := []struct{ block, field, reason string }{
		{"kubernetes:\n  placement: sideways\n", "kubernetes.placement", `"sideways" is not one of same-node, node-per-variant`},
		{"kubernetes:\n  load_placement: elsewhere\n", "kubernetes.load_placement", `"elsewhere" is not one of prefer-other-node, other-node`},
		{"kubernetes:\n  namespace: Perf_Tests\n", "kubernetes.namespace", "is not a Kubernetes namespace name"},
		{"kubernetes:\n  images: {nosuch: app:1}\n", "kubernetes.images.nosuch", "names no service"},
		{"kubernetes:\n  images: {job: app:1}\n", "kubernetes.images.job", "names no service"},
		{"kubernetes:\n  node_selector: {zone: \"a b\"}\n", "kubernetes.node_selector.zone", "is not a Kubernetes label value"},
		{"kubernetes:\n  tolerations: [{key: k, operator: Maybe}]\n", "kubernetes.tolerations[0].operator", `"Maybe" is not one of Equal, Exists`},
		{"kubernetes:\n  namespaces: perf\n", "", "namespaces"},
		{"kubernetes:\n  load_pods: 0\n", "kubernetes.load_pods", "0 is not between 1 and 64"},
		{"kubernetes:\n  image_pull_policy: Sometimes\n", "kubernetes.image_pull_policy", `"Sometimes" is not one of Always, IfNotPresent, Never`},
	}
	const job = "name: j\njob: {command: [java, -version], repetitions: 2}\nvariants: [{name: baseline}]\nkubernetes: {images: {job: \"toll-java:dev\"}}\n"
	if s, err := parse("j.yaml", []byte(job), testMachine); err != nil || s.Kubernetes.Images[JobImage] != "toll-java:dev" {
		t.Errorf("a job's image (kubernetes.images.job): %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			_, err := parse("demo.yaml", []byte(good+tt.block), testMachine)
			if err == nil {
				t.Fatalf("accepted %q", tt.block)
			}
			if !strings.Contains(err.Error(), tt.reason) || !strings.HasPrefix(err.Error(), fmt.Sprintf("demo.yaml:%d: ", lines+2)) ||
				(tt.field != "" && !strings.Contains(err.Error(), tt.field+": ")) {
				t.Errorf("error %q; want line %d, field %s, %q", err, lines+2, tt.field, tt.reason)
			}
		})
	}
}
