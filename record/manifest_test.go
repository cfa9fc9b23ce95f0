package record

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestNodeSetReadsOldAndNew checks that a manifest's nodes of a variant
// read as a set from a list, and from the one node's name that results
// written before the set was a list hold.
func TestNodeSetReadsOldAndNew(t *testing.T) {
	for _, tt := range []struct {
		name, json string
		want       NodeSet
		fails      bool
	}{
		{"one node, as older results hold it", `{"nodes":{"otel":"node-a"}}`, NodeSet{"node-a"}, false},
		{"a list", `{"nodes":{"otel":["node-a","node-b"]}}`, NodeSet{"node-a", "node-b"}, false},
		{"no node", `{"nodes":{"otel":""}}`, nil, false},
		{"neither", `{"nodes":{"otel":3}}`, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var k KubernetesLayout
			err := json.Unmarshal([]byte(tt.json), &k)
			if (err != nil) != tt.fails {
				t.Fatalf("unmarshal %s: %v, want an error %v", tt.json, err, tt.fails)
			}
			if !tt.fails && !slices.Equal(k.Nodes["otel"], tt.want) {
				t.Errorf("nodes %q, want %q", k.Nodes["otel"], tt.want)
			}
		})
	}
	var n NodeSet
	for _, node := range []string{"node-a", "", "node-b", "node-a"} {
		n.Add(node)
	}
	if !slices.Equal(n, NodeSet{"node-a", "node-b"}) {
		t.Errorf("set %q, want each node once in the order added", n)
	}
}
