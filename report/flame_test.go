package report

import (
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
)

func TestFlameSVG(t *testing.T) {
	d := analyze.ProfileDiff{Variant: "otel", Flame: &analyze.FlameNode{Name: "all", Baseline: 1, Variant: 1.5, Children: []*analyze.FlameNode{
		{Name: "main.main", Baseline: 1, Variant: 1.5, Children: []*analyze.FlameNode{
			{Name: "main.handle", Baseline: 1, Variant: 0.9},
			{Name: "go.opentelemetry.io/otel/sdk/trace.(*tracer).Start", Baseline: 0, Variant: 0.6},
		}},
	}}}
	svg := string(flameSVG(d))
	for _, want := range []string{`class="flame"`, "main.handle", "(*tracer).Start", "rgb(235,60,60)", "rgb(", "Δ +0.6000 ms"} {
		if !strings.Contains(svg, want) {
			t.Errorf("flame graph lacks %q:\n%s", want, svg)
		}
	}
	// The span's frame, the largest growth, is the reddest; handle, which
	// shrank, is blue.
	if i := strings.Index(svg, "main.handle"); i < 0 || !strings.Contains(svg[i:], `,235)"`) {
		t.Errorf("a frame that shrank is not blue:\n%s", svg)
	}
	if flameSVG(analyze.ProfileDiff{Variant: "x"}) != "" {
		t.Error("a flame graph without stacks")
	}
}
