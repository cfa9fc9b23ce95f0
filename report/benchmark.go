package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tollperf/toll/analyze"
)

// BenchmarkEntry is one series for github-action-benchmark's
// customSmallerIsBetter tool: a variant's overhead ratio for one cost at
// one load step.
type BenchmarkEntry struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	Range string  `json:"range,omitempty"`
	Extra string  `json:"extra,omitempty"`
}

// BenchmarkJSON writes each variant's overheads as github-action-benchmark
// customSmallerIsBetter JSON, so that its trend pages and alerts follow
// what an agent costs from run to run. The value is the ratio to the
// baseline of the same run (1.25 is +25%): ratios, not raw values, because
// a CI runner's speed drifts between jobs. Costs compared by difference
// have no ratio and are left out, and so is throughput (and its best
// second), which is better larger.
func BenchmarkJSON(w io.Writer, s *analyze.Summary) error {
	entries := []BenchmarkEntry{}
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			if v.Name == s.Baseline {
				continue
			}
			for _, c := range v.Costs {
				d := c.Delta
				if analyze.BetterLarger(c.Cost) || d == nil || d.Pct == nil || d.CIUnit != "%" {
					continue
				}
				e := BenchmarkEntry{
					Name:  fmt.Sprintf("%s @ %s: %s", v.Name, st.Label(), c.Label),
					Unit:  "× " + s.Baseline,
					Value: 1 + *d.Pct/100,
					Extra: fmt.Sprintf("%s: %+.1f%% against %s over %d rounds (%s)", c.Cost, *d.Pct, s.Baseline, d.N, RunLabel(s)),
				}
				if low, high, ok := d.RatioBounds(); ok {
					e.Range = fmt.Sprintf("95%% CI [%.4f, %.4f]", low, high)
				}
				entries = append(entries, e)
			}
		}
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return fmt.Errorf("encode benchmark entries: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
