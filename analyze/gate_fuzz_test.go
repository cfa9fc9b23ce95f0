package analyze

import (
	"math"
	"testing"
)

// FuzzParseGate feeds --fail-on arbitrary expressions: never a panic, and
// a gate it accepts has a finite threshold above -100% that it can judge
// against a run of no trials.
func FuzzParseGate(f *testing.F) {
	for _, s := range []string{"cpu_per_request > +5%", "p99 > 10%", "rss_mib > -99.9%", "cpu > +1e6%", "p99>%", "> 5%", "cpu_per_request > +NaN%", "cpu_per_request > 0x10%", "x > +5% > 6%", "p999 > 1_0%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParseGate(text)
		if err != nil {
			return
		}
		if math.IsNaN(g.Pct) || math.IsInf(g.Pct, 0) || g.Pct <= -100 {
			t.Fatalf("ParseGate(%q) accepted threshold %g", text, g.Pct)
		}
		_ = g.CheckRun(&Summary{})
	})
}
