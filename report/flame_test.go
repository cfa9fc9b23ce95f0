package report

import (
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
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

// TestFlameSection checks where report.html puts a flame graph: under a
// heading of its own that names it, in an element whose id names the
// variant (and the step, when the variant was profiled at several), not
// under another chart's heading.
func TestFlameSection(t *testing.T) {
	flame := &analyze.FlameNode{Name: "all", Baseline: 1, Variant: 1.5, Children: []*analyze.FlameNode{
		{Name: "main.main", Baseline: 1, Variant: 1.5},
	}}
	tests := []struct {
		name  string
		steps []int
		ids   []string
	}{
		{name: "one step", steps: []int{0}, ids: []string{"flame-otel"}},
		{name: "two steps", steps: []int{0, 1}, ids: []string{"flame-otel-step0", "flame-otel-step1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := profiledSummary(map[string]float64{"main.main": 0.5}, 0.1)
			s.Manifest = &record.Manifest{}
			s.Profiles[0].Flame = flame
			for _, st := range tt.steps[1:] {
				d := s.Profiles[0]
				d.Step = st
				s.Profiles = append(s.Profiles, d)
			}
			var b strings.Builder
			if err := HTML(&b, s); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if n := strings.Count(page, `class="flame"`); n != len(tt.ids) {
				t.Fatalf("%d flame graphs, want %d", n, len(tt.ids))
			}
			rest := page
			for _, id := range tt.ids {
				i := strings.Index(rest, `id="`+id+`"`)
				if i < 0 {
					t.Fatalf("no element with id %q:\n%s", id, page)
				}
				rest = rest[i:]
				j := strings.Index(rest, `class="flame"`)
				head := rest[:j]
				if !strings.Contains(head, "<h3>Differential flame graph: otel") {
					t.Errorf("flame graph %s is not under its own heading: %q", id, head)
				}
				if strings.Contains(head, "Per second") {
					t.Errorf("flame graph %s is under the per-second charts' heading: %q", id, head)
				}
				rest = rest[j:]
			}
		})
	}
}
