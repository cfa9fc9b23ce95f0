package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// Flag marks: a cause that invalidates its trials (they did not measure
// what was planned) is a failure; any other flag is a condition under
// which a measurement that stands was taken, noted, not failed.
const (
	markInvalid   = "✗"
	markCondition = "·"
)

// flagMark is the mark of a group's line.
func flagMark(g analyze.FlagGroup) string {
	if g.Invalidates {
		return markInvalid
	}
	return markCondition
}

// flagsHeading introduces the flags, a line per cause.
func flagsHeading(s *analyze.Summary) string {
	h := "Flagged trials, by cause (kept in the comparison unless marked left out)"
	if s.ExcludeFlagged {
		h = "Flagged trials, by cause (left out of the comparison)"
	}
	invalid, cond := false, false
	for _, g := range s.FlagGroups {
		invalid = invalid || g.Invalidates
		cond = cond || !g.Invalidates
	}
	switch {
	case invalid && cond:
		h += "; " + markInvalid + " marks a cause whose trials did not measure what was planned, the others are conditions of costs that stand"
	case cond:
		h += "; none invalidates a trial"
	}
	return h + ":"
}

// trialsText says which trials a group flagged: "in 17 of 20 trials",
// naming them when they are few: "in 2 of 20 trials (3, 7)".
func trialsText(g analyze.FlagGroup) string {
	n := len(g.Trials)
	s := fmt.Sprintf("in %d of %d trials", n, g.Of)
	if n == 1 {
		s = fmt.Sprintf("in 1 of %d trials", g.Of)
	}
	if n <= 5 && n < g.Of {
		ids := make([]string, n)
		for i, t := range g.Trials {
			ids[i] = strconv.Itoa(t)
		}
		s += " (" + strings.Join(ids, ", ") + ")"
	}
	return s
}

// causeText is a cause's own words, with the worst figure its flags
// carried.
func causeText(g analyze.FlagGroup) string {
	w := 0.0
	if g.Worst != nil {
		w = *g.Worst
	} else {
		// Without a figure, the first trial's own message says it (an
		// error may be followed by the last lines of a service's log).
		msg := strings.TrimRight(FlagText(g.First), "\n")
		if len(g.Trials) > 1 {
			return fmt.Sprintf("trial %d (%s, round %d): %s", g.First.Trial, g.First.Variant, g.First.Round, msg)
		}
		return fmt.Sprintf("%s, round %d: %s", g.First.Variant, g.First.Round, msg)
	}
	switch g.Code {
	case analyze.FlagLateArrival:
		return fmt.Sprintf("the load generator sent requests up to %s late at p99 (above %d µs): that delay is in their latency, and their CPU and memory costs stand; see Arrivals",
			micros(w), analyze.LateArrivalLimit.Microseconds())
	case analyze.FlagSteal:
		return fmt.Sprintf("the hypervisor took up to %.1f%% of the CPUs' time (steal, above %g%%): the machine was shared",
			w, analyze.StealLimit)
	case analyze.FlagSaturated:
		return fmt.Sprintf("a CPU that runs no measured service was up to %.0f%% busy: toll's load generator may have been starved, so rate and latency may be its own", w)
	case analyze.FlagErrors:
		return fmt.Sprintf("up to %.2f%% of requests failed (each trial's flag in summary.json says how)", w)
	case analyze.FlagUnsent:
		return fmt.Sprintf("up to %.0f scheduled requests were never sent (load generator or connections saturated)", w)
	case analyze.FlagThrottled:
		return fmt.Sprintf("a service was throttled up to %.0f times by its CPU limit", w)
	case analyze.FlagRateMissed:
		return fmt.Sprintf("the achieved rate fell to %.1f%% of the target (below 99%%)", w)
	case analyze.FlagShort:
		return fmt.Sprintf("the measured window was as short as %.0f%% of the one planned", w)
	}
	return fmt.Sprintf("worst %g", w)
}

// micros writes a number of microseconds in the unit that reads best: "964
// µs", "12 ms", "3.5 s".
func micros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.1f s", us/1e6)
	case us >= 1e4:
		return fmt.Sprintf("%.0f ms", us/1e3)
	}
	return fmt.Sprintf("%.0f µs", us)
}

// FlagGroupText writes a cause's line: "late-arrivals in 17 of 20 trials:
// the load generator sent requests up to 964 µs late at p99 …", and
// whether its trials were left out of the comparison.
func FlagGroupText(s *analyze.Summary, g analyze.FlagGroup) string {
	line := g.Code + " " + trialsText(g) + ": " + causeText(g)
	switch {
	case g.Excluded == 0 || s.ExcludeFlagged:
	case g.Excluded == len(g.Trials) && g.Code == analyze.FlagInterrupted:
		line += " [left out of the comparison; --include-interrupted keeps them]"
	case g.Excluded == len(g.Trials):
		line += " [left out of the comparison]"
	default:
		line += fmt.Sprintf(" [%d of them left out of the comparison]", g.Excluded)
	}
	return line
}

// flagCauses names each cause in brief, for a headline's note:
// "late-arrivals in 17 of 20 trials, steal in 6 of 20 trials".
func flagCauses(s *analyze.Summary, invalid bool) string {
	var parts []string
	for _, g := range s.FlagGroups {
		if g.Invalidates == invalid {
			parts = append(parts, fmt.Sprintf("%s in %d of %d trials", g.Code, len(g.Trials), g.Of))
		}
	}
	return strings.Join(parts, ", ")
}

// writeFlags lists the flags, a line per cause.
func writeFlags(w io.Writer, s *analyze.Summary, indent string) {
	if len(s.FlagGroups) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s%s\n", indent, flagsHeading(s))
	for _, g := range s.FlagGroups {
		line := strings.ReplaceAll(FlagGroupText(s, g), "\n", "\n"+indent+"      ")
		fmt.Fprintf(w, "%s  %s %s\n", indent, flagMark(g), line)
	}
}
