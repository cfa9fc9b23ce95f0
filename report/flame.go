package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// flameWidth and flameRow are a flame graph's width and row height in px.
const (
	flameWidth = 1100.0
	flameRow   = 16.0
)

// flameSVG draws d's differential flame graph: the variant's stacks from the
// root down, each frame as wide as the variant's CPU per request in it, red
// where its function (with what it calls, over all its stacks) grew against
// the baseline and blue where it shrank, deeper for the larger change; a
// frame's title gives both sides' figures, for its stack and its function.
func flameSVG(d analyze.ProfileDiff) template.HTML {
	root := d.Flame
	if root == nil || root.Variant <= 0 {
		return ""
	}
	maxDelta := 0.0
	depth := 0
	var walk func(n *analyze.FlameNode, level int)
	walk = func(n *analyze.FlameNode, level int) {
		maxDelta = max(maxDelta, math.Abs(n.FunctionVariant-n.FunctionBaseline))
		depth = max(depth, level+1)
		for _, c := range n.Children {
			walk(c, level+1)
		}
	}
	for _, c := range root.Children {
		walk(c, 1)
	}
	depth = max(depth, 1)
	height := float64(depth)*flameRow + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="flame" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="monospace" font-size="11">`,
		flameWidth, height, flameWidth, height)
	fmt.Fprintf(&b, `<text x="0" y="12">%s: %.4f ms per request profiled (baseline %.4f); a frame is red where its function, with what it calls, grew over all its stacks, blue where it shrank</text>`,
		html.EscapeString(d.Variant), root.Variant, root.Baseline)
	scale := flameWidth / root.Variant
	var draw func(n *analyze.FlameNode, x float64, level int)
	draw = func(n *analyze.FlameNode, x float64, level int) {
		w := n.Variant * scale
		if w < 0.5 {
			return
		}
		y := 20 + float64(level)*flameRow
		fmt.Fprintf(&b, `<g><title>%s&#10;this stack: baseline %.4f ms, %s %.4f ms per request&#10;the function on all its stacks: baseline %.4f ms, %s %.4f ms, Δ %s ms per request</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s" stroke="#fff" stroke-width="0.5"/>`,
			html.EscapeString(n.Name), n.Baseline, html.EscapeString(d.Variant), n.Variant,
			n.FunctionBaseline, html.EscapeString(d.Variant), n.FunctionVariant, signed(n.FunctionVariant-n.FunctionBaseline, 4),
			x, y, w, flameRow-1, flameColor(n.FunctionVariant-n.FunctionBaseline, maxDelta))
		if chars := int(w / 7); chars >= 3 {
			label := n.Name
			if len(label) > chars {
				label = label[:chars-1] + "…"
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`, x+2, y+flameRow-4, html.EscapeString(label))
		}
		b.WriteString("</g>")
		cx := x
		for _, c := range n.Children {
			draw(c, cx, level+1)
			cx += c.Variant * scale
		}
	}
	x := 0.0
	for _, c := range root.Children {
		draw(c, x, 0)
		x += c.Variant * scale
	}
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// flameID is the id of d's flame graph in report.html: flame-<variant>, and
// flame-<variant>-step<N> when the run profiled the variant at several load
// steps (as its profile file is named).
func flameID(d analyze.ProfileDiff, all []analyze.ProfileDiff) string {
	for _, o := range all {
		if o.Variant == d.Variant && o.Step != d.Step {
			return fmt.Sprintf("flame-%s-step%d", d.Variant, d.Step)
		}
	}
	return "flame-" + d.Variant
}

// flameColor is a frame's fill: white for no change, to red for the
// largest growth and to blue for the largest shrinkage.
func flameColor(delta, maxDelta float64) string {
	if maxDelta <= 0 {
		return "rgb(235,235,235)"
	}
	f := math.Min(1, math.Abs(delta)/maxDelta)
	fade := int(235 - 175*f)
	if delta >= 0 {
		return fmt.Sprintf("rgb(235,%d,%d)", fade, fade)
	}
	return fmt.Sprintf("rgb(%d,%d,235)", fade, fade)
}
