package report

import (
	"fmt"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// InvalidTexts returns in English why run s is not valid, one line per
// load step and variant (analyze.Invalidity); or the lines a summary read
// back holds. It is empty for a valid run.
func InvalidTexts(s *analyze.Summary) []string {
	if len(s.Invalidities) == 0 {
		return s.Invalid
	}
	out := make([]string, len(s.Invalidities))
	for i, iv := range s.Invalidities {
		out[i] = invalidityEN(iv)
	}
	return out
}

// invalidityEN returns one reason a run is invalid in English.
func invalidityEN(iv analyze.Invalidity) string {
	if iv.Code == analyze.InvalidUnanswered {
		rounds := fmt.Sprintf("%d rounds", iv.Rounds)
		if iv.Rounds == 1 {
			rounds = "1 round"
		}
		return fmt.Sprintf("%s at %s: no interval for %s (%s compared; an interval needs 2): the precision run ended before it had one, so it answers nothing about it; a longer budget gives more rounds (precision.budget, toll run --budget)",
			iv.Variant, iv.Step, strings.Join(iv.Costs, ", "), rounds)
	}
	var why []string
	switch {
	case iv.Failed > 0 && iv.Jobs:
		why = append(why, fmt.Sprintf("%d failed", iv.Failed))
	case iv.Failed > 0:
		why = append(why, fmt.Sprintf("no request succeeded in %d", iv.Failed))
	}
	if iv.Unanalysed > 0 {
		why = append(why, fmt.Sprintf("%d could not be analysed", iv.Unanalysed))
	}
	for _, f := range iv.Flagged {
		why = append(why, fmt.Sprintf("flagged %s in %d", f.Code, f.Trials))
	}
	all := fmt.Sprintf("all %d trials failed or were flagged", iv.Trials)
	if iv.Trials == 1 {
		all = "its only trial failed or was flagged"
	}
	return fmt.Sprintf("%s at %s: %s (%s)", iv.Variant, iv.Step, all, strings.Join(why, "; "))
}
