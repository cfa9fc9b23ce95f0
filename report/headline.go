package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// HeadlineText writes a headline as a sentence: "+50% CPU per request
// [+31%, +72%], +0.9 ms latency p99 (+12% [+5%, +20%]); 4.0 spans per
// request". The variant's name is not in it.
func HeadlineText(h analyze.Headline) string {
	var parts []string
	for _, c := range h.Changes {
		parts = append(parts, headlineChange(c))
	}
	s := strings.Join(parts, ", ")
	var vals []string
	for _, c := range h.Values {
		v := num(c.Value, c.Digits)
		if c.Unit != "" {
			vals = append(vals, fmt.Sprintf("%s %s %s", v, c.Unit, c.Label))
		} else {
			vals = append(vals, v+" "+c.Label)
		}
	}
	if len(vals) > 0 {
		if s != "" {
			s += "; "
		}
		s += strings.Join(vals, ", ")
	}
	if s == "" {
		return "no cost compared"
	}
	return s
}

// pctText writes a percentage with a sign, to whole percents from 10%,
// and below to as many decimals as it takes not to read as 0 when it is
// not (pctBound).
func pctText(x float64) string {
	if math.Abs(x) >= 10 {
		return fmt.Sprintf("%+.0f%%", x)
	}
	return pctBound(x, 1)
}

func headlineChange(c analyze.HeadlineCost) string {
	d := c.Delta
	bounds := ""
	if d.CILow != nil && d.CIHigh != nil {
		if d.Pct != nil {
			bounds = fmt.Sprintf("[%s, %s]", pctText(*d.CILow), pctText(*d.CIHigh))
		} else {
			bounds = fmt.Sprintf("[%s, %s %s]", signed(*d.CILow, c.Digits), signed(*d.CIHigh, c.Digits), c.Unit)
		}
	}
	if d.CILow == nil {
		if d.Pct != nil {
			return fmt.Sprintf("%s %s (no interval)", pctText(*d.Pct), c.Label)
		}
		return fmt.Sprintf("%s %s %s (no interval)", signed(d.Abs, c.Digits), c.Unit, c.Label)
	}
	if c.TooWide {
		// A cost that varies by start is compared over the starts: its
		// pairs are starts, not rounds.
		over := "rounds"
		if d.Starts > 0 {
			over = "starts"
		}
		return fmt.Sprintf("%s: interval too wide to tell (%d %s)", c.Label, d.N, over)
	}
	if !d.Significant {
		return fmt.Sprintf("no resolved change in %s %s", c.Label, bounds)
	}
	if c.ByChance {
		return fmt.Sprintf("no resolved change in %s once corrected for the costs tested %s", c.Label, bounds)
	}
	// Latency and memory read best in their own unit, with the relative
	// change beside it; the rest as a relative change.
	if d.Pct != nil && c.Cost != analyze.CPUPerRequest && c.Cost != analyze.CPUNoJIT && (c.Unit == "ms" || c.Unit == "MiB") {
		return fmt.Sprintf("%s %s %s (%s %s)", signed(d.Abs, c.Digits), c.Unit, c.Label, pctText(*d.Pct), bounds)
	}
	if d.Pct != nil {
		return fmt.Sprintf("%s %s %s", pctText(*d.Pct), c.Label, bounds)
	}
	return fmt.Sprintf("%s %s %s %s", signed(d.Abs, c.Digits), c.Unit, c.Label, bounds)
}

// Headlines are a start-up or job experiment's ratios, as hyperfine says
// them but with their interval's bounds: "otel at 1 CPU: 1.07 × baseline wall time [1.05, 1.09]", with "(~)"
// when the interval holds 1. They come from analyze's Ratio; none for a
// load test.
func Headlines(s *analyze.Summary) []string {
	var out []string
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			if v.Ratio == nil {
				continue
			}
			line := v.Name
			if len(s.Steps) > 1 {
				line += " at " + st.Label()
			}
			line += ": " + ratioText(*v.Ratio)
			if !v.Ratio.Significant {
				line += " (~: the interval holds 1)"
			}
			out = append(out, line)
		}
	}
	return out
}

// ratioText writes a start-up or job experiment's ratio with its 95%
// interval as bounds, which a ratio's are not symmetric about: "1.07 ×
// baseline wall time [1.05, 1.09]".
func ratioText(r analyze.Ratio) string {
	s := fmt.Sprintf("%.2f × baseline %s", r.Times, r.Label)
	if r.Low != nil && r.High != nil {
		s += fmt.Sprintf(" [%s, %s]", ratioBound(*r.Low), ratioBound(*r.High))
	} else if r.PlusMinus != nil {
		s = r.String() // a summary from before the bounds were kept
	}
	return s
}

// ratioBound writes a bound of a ratio to two decimals, or as many more
// as it takes for a bound that is not 1 not to read as 1.
func ratioBound(x float64) string {
	digits := 2
	for ; digits < 6 && x != 1; digits++ {
		if strings.Trim(fmt.Sprintf("%.*f", digits, x), "0.") != "1" {
			break
		}
	}
	return fmt.Sprintf("%.*f", digits, x)
}

// roundsText says how many times a run's variants ran: "10 rounds" of a
// load test, "a startup experiment, 6 repetitions" of a start-up or job
// experiment.
func roundsText(s *analyze.Summary) string {
	n := s.Manifest.Rounds
	if w := s.Manifest.Workload; w != "" && w != "load" {
		return fmt.Sprintf("a %s experiment, %s", w, plural(n, "repetition"))
	}
	return plural(n, "round")
}

// plural writes n things: "1 round", "10 rounds".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
