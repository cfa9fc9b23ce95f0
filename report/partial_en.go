package report

import (
	"fmt"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// PartialText returns in English, in one line, what a partial run is
// missing: "partial run (interrupted): 7 of 20 trials complete; missing:
// round 4 otel, rounds 5-10"; or the line a summary read back holds.
func PartialText(p *analyze.Partial) string {
	if p.Text != "" {
		return p.Text
	}
	var b strings.Builder
	b.WriteString("partial run")
	switch {
	case p.Interrupted:
		b.WriteString(" (interrupted)")
	case p.Unfinished:
		b.WriteString(" (toll did not finish it: killed, or still running)")
	case p.Error != "":
		fmt.Fprintf(&b, " (stopped by an error: %s)", p.Cause)
	}
	if p.Planned == 0 {
		fmt.Fprintf(&b, ": %d trials complete; the manifest does not list the trials planned", p.Complete)
	} else {
		fmt.Fprintf(&b, ": %d of %d trials complete", p.Complete, p.Planned)
		if len(p.Gaps) > 0 {
			fmt.Fprintf(&b, "; missing: %s", gapsEN(p.Gaps))
		}
	}
	for _, u := range p.Unreadable {
		reason, _, _ := strings.Cut(u.Reason, "\n")
		fmt.Fprintf(&b, "; left out, unreadable: %s", reason)
	}
	return b.String()
}

// gapsEN names missing trials: "round 4 otel, rounds 5-10", each load
// step's after its label when they name one ("100 req/s: round 2
// baseline; 200 req/s: rounds 1-2").
func gapsEN(gaps []analyze.Gap) string {
	var parts, items []string
	for i, g := range gaps {
		switch {
		case g.Variants != nil:
			items = append(items, fmt.Sprintf("round %d %s", g.First, strings.Join(g.Variants, " ")))
		case g.First == g.Last:
			items = append(items, fmt.Sprintf("round %d", g.First))
		default:
			items = append(items, fmt.Sprintf("rounds %d-%d", g.First, g.Last))
		}
		if i+1 < len(gaps) && gaps[i+1].Step == g.Step {
			continue
		}
		part := strings.Join(items, ", ")
		if g.Step != "" {
			part = g.Step + ": " + part
		}
		parts, items = append(parts, part), nil
	}
	return strings.Join(parts, "; ")
}
