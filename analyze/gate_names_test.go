package analyze

import (
	"strings"
	"testing"
)

// TestGateCostDidYouMean checks what a gate naming a cost toll does not
// know says: the closest name, as a gate writes it, when one is a few
// edits away; every name when none is close.
func TestGateCostDidYouMean(t *testing.T) {
	for _, tt := range []struct {
		gate, want string
		lists      bool
	}{
		{"cpu_per_reqest > +5%", `(did you mean "cpu_per_request"?)`, false},
		{"rss_mb > +5%", `(did you mean "rss_mib"?)`, false},
		{"p99.0 > +5%", `(did you mean "p99.9"?)`, false},
		{"latncy_p99 > +5%", `(did you mean "latency_p99"?)`, false},
		{"bananas > +5%", `no cost "bananas" (costs: `, true},
	} {
		_, err := ParseGate(tt.gate)
		if err == nil {
			t.Errorf("%s: no error", tt.gate)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %s", tt.gate, err, tt.want)
		}
		if lists := strings.Contains(err.Error(), "cpu_per_request_ms, "); lists != tt.lists {
			t.Errorf("%s: lists every cost %v, want %v: %v", tt.gate, lists, tt.lists, err)
		}
	}
}
