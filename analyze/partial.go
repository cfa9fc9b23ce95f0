package analyze

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/tollperf/toll/record"
)

// Partial describes a run that did not carry out its whole plan: it was
// interrupted, toll was killed (the manifest has no finish time), or an
// error ended it early. Its trials are analysed as any others; Partial says
// what is missing.
type Partial struct {
	// Interrupted is set when the run was interrupted (SIGINT, SIGTERM).
	Interrupted bool `json:"interrupted,omitempty"`
	// Unfinished is set when the manifest has no finish time: toll was
	// killed, or is still running.
	Unfinished bool `json:"unfinished,omitempty"`
	// Error is the error that ended the run early, as the manifest has it.
	Error string `json:"error,omitempty"`
	// Planned is the number of trials planned (0 when the manifest does
	// not list them); Complete the number of planned trials whose file is
	// there and that ran to their end.
	Planned  int `json:"planned"`
	Complete int `json:"complete"`
	// Missing lists the planned trials that did not run, or were cut
	// short, in plan order.
	Missing []record.PlannedTrial `json:"missing,omitempty"`
	// Unreadable lists the trial files that could not be read, and why:
	// their trials are left out, as missing ones are.
	Unreadable []record.Unreadable `json:"unreadable,omitempty"`
	// Text says it in one line: "partial run (interrupted): 7 of 20 trials
	// complete; missing: round 4 otel, rounds 5-10". analyze leaves it
	// empty; report fills it in when it writes summary.json, and a
	// summary read back keeps it.
	Text string `json:"text"`
	// Cause is the first line of Error, without the announcement of a
	// service's log that may end it (that log is in the flags of the
	// trial it cut short).
	Cause string `json:"-"`
	// Gaps name the missing trials by round, for a report's words.
	Gaps []Gap `json:"-"`
}

// partialRun compares the trials found with the manifest's plan, and
// returns nil for a run that carried out all of it.
func partialRun(m *record.Manifest, trials []*record.Trial, unreadable []record.Unreadable) *Partial {
	p := &Partial{Interrupted: m.Interrupted, Unfinished: m.Finished.IsZero(), Error: m.Error, Planned: len(m.Planned), Unreadable: unreadable}
	done := map[int]*record.Trial{}
	for _, t := range trials {
		if !t.Interrupted {
			done[t.Index] = t
		}
	}
	for _, pt := range m.Planned {
		if t, ok := done[pt.Index]; ok && t.Variant == pt.Variant && t.Round == pt.Round && t.Step == pt.Step {
			p.Complete++
		} else {
			p.Missing = append(p.Missing, pt)
		}
	}
	if !p.Interrupted && !p.Unfinished && len(p.Missing) == 0 && len(p.Unreadable) == 0 {
		return nil
	}
	p.Cause = logFollows.ReplaceAllString(oneLine(p.Error), "")
	if p.Planned == 0 {
		p.Complete = len(done)
	}
	p.Gaps = gapsOf(m, p.Missing)
	return p
}

// Gap is missing trials named together: whole rounds First to Last of a
// load step, or round First (= Last) with only Variants missing.
type Gap struct {
	// Step is the load step's label; "" when the plan has one step.
	Step        string
	First, Last int
	// Variants are the variants missing from round First, in plan
	// order; nil for whole rounds.
	Variants []string
}

// gapsOf names the missing trials by round: a round none of whose trials
// is there as one of a range of whole rounds ("rounds 5-10"), a round
// with some by the missing variants ("round 4 otel"), step by step in
// the plan's order.
func gapsOf(m *record.Manifest, missing []record.PlannedTrial) []Gap {
	type key struct{ step, round int }
	planned := map[key]int{}
	var steps []int
	for _, pt := range m.Planned {
		planned[key{pt.Step, pt.Round}]++
		if !slices.Contains(steps, pt.Step) {
			steps = append(steps, pt.Step)
		}
	}
	byRound := map[key][]string{}
	for _, pt := range missing {
		k := key{pt.Step, pt.Round}
		byRound[k] = append(byRound[k], pt.Variant)
	}
	var gaps []Gap
	for _, st := range steps {
		var rounds []int
		for k := range byRound {
			if k.step == st {
				rounds = append(rounds, k.round)
			}
		}
		slices.Sort(rounds)
		label := ""
		if len(steps) > 1 {
			label = stepLabel(m, st)
		}
		for i := 0; i < len(rounds); i++ {
			r := rounds[i]
			k := key{st, r}
			if len(byRound[k]) < planned[k] {
				gaps = append(gaps, Gap{Step: label, First: r, Last: r, Variants: uniq(byRound[k])})
				continue
			}
			j := i
			for j+1 < len(rounds) && rounds[j+1] == rounds[j]+1 && len(byRound[key{st, rounds[j+1]}]) == planned[key{st, rounds[j+1]}] {
				j++
			}
			gaps = append(gaps, Gap{Step: label, First: r, Last: rounds[j]})
			i = j
		}
	}
	return gaps
}

// logFollows matches the end of an error's first line that announces the
// lines of a service's log after it.
var logFollows = regexp.MustCompile(`; (?:first \d+ and )?last \d+ log lines:$`)

// stepLabel names load step i of the manifest's load settings: in a
// matrix, load step i % n under the matrix's setting i / n, where n is the
// number of load steps.
func stepLabel(m *record.Manifest, i int) string {
	var st Step
	if n := len(m.Load.Users) + len(m.Load.Rates); m.Matrix != nil && n > 0 && i/n < len(m.Matrix.CPUs) {
		st.CPULimit = m.Matrix.CPUs[i/n]
		i %= n
	}
	switch {
	case i < len(m.Load.Users):
		st.Users = m.Load.Users[i]
	case i < len(m.Load.Rates):
		st.Rate, st.Idle = m.Load.Rates[i], m.Load.Rates[i] == 0
	default:
		return "step " + strconv.Itoa(i)
	}
	return st.Label()
}

// uniq returns xs without repeats, in their first order.
func uniq(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
