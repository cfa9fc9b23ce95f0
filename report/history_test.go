package report

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/tollperf/toll/history"
)

// TestHistorySVGLabelsFit checks that every y-axis label of a history
// chart starts inside the chart, however wide its unit makes it: a label
// is drawn right-aligned at the axis, about 6.5 px a character.
func TestHistorySVGLabelsFit(t *testing.T) {
	for _, tt := range []struct {
		name   string
		unit   string
		values []float64
	}{
		{"percent", "%", []float64{12.5, 14.9, 11.0}},
		{"throughput", "KiB/s", []float64{87.07, 90.59, 90.6}},
		{"large", "B", []float64{123456789, 223456789}},
		{"negative", "ms", []float64{-1234.5, -99.25}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &history.Series{Unit: tt.unit}
			for i, v := range tt.values {
				s.Points = append(s.Points, history.Point{Run: int64(i + 1), Change: v})
			}
			svg := historySVG(s)
			labels := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.-]+" font-size="11" text-anchor="end">([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
			if len(labels) != 3 {
				t.Fatalf("%d y-axis labels, want 3:\n%s", len(labels), svg)
			}
			for _, m := range labels {
				end, _ := strconv.ParseFloat(m[1], 64)
				if width := 6.5 * float64(len([]rune(m[2]))); end-width < 0 {
					t.Errorf("label %q ends at x=%.1f, about %.0f px wide: it starts outside the chart", m[2], end, width)
				}
			}
		})
	}
}
