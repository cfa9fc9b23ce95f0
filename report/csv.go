package report

import (
	"encoding/csv"
	"io"
	"sort"
	"strconv"

	"github.com/tollperf/toll/analyze"
)

// CSV writes the long format: one row per trial and cost, with the columns
// scenario, step, target_rate, round, trial, variant, cost, unit, value,
// flagged. Every consumer (pandas, R, a spreadsheet) can pivot it.
func CSV(w io.Writer, s *analyze.Summary) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"scenario", "step", "target_rate", "round", "trial", "variant", "cost", "unit", "value", "flagged"})
	rates := map[int]float64{}
	for _, st := range s.Steps {
		rates[st.Index] = st.Rate
	}
	for _, t := range s.Trials {
		costs := make([]string, 0, len(t.Costs))
		for c := range t.Costs {
			costs = append(costs, string(c))
		}
		sort.Strings(costs)
		for _, c := range costs {
			info := analyze.Info(analyze.Cost(c))
			cw.Write([]string{s.Scenario, strconv.Itoa(t.Step), strconv.FormatFloat(rates[t.Step], 'f', -1, 64),
				strconv.Itoa(t.Round), strconv.Itoa(t.Index), t.Variant, c, info.Unit,
				strconv.FormatFloat(t.Costs[analyze.Cost(c)], 'g', 10, 64), strconv.FormatBool(len(t.Flags) > 0)})
		}
	}
	cw.Flush()
	return cw.Error()
}
