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
	cw.Write([]string{"scenario", "step", "target_rate", "target_users", "round", "trial", "variant", "cost", "unit", "value", "flagged"})
	steps := map[int]analyze.Step{}
	for _, st := range s.Steps {
		steps[st.Index] = st
	}
	for _, t := range s.Trials {
		costs := make([]string, 0, len(t.Costs))
		for c := range t.Costs {
			costs = append(costs, string(c))
		}
		sort.Strings(costs)
		for _, c := range costs {
			info := analyze.Info(analyze.Cost(c))
			cw.Write([]string{s.Scenario, strconv.Itoa(t.Step), strconv.FormatFloat(steps[t.Step].Rate, 'f', -1, 64),
				strconv.Itoa(steps[t.Step].Users), strconv.Itoa(t.Round), strconv.Itoa(t.Index), t.Variant, c, info.Unit,
				strconv.FormatFloat(t.Costs[analyze.Cost(c)], 'g', 10, 64), strconv.FormatBool(len(t.Flags) > 0)})
		}
	}
	cw.Flush()
	return cw.Error()
}
