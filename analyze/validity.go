package analyze

import (
	"maps"
	"slices"
	"strings"

	"github.com/tollperf/toll/record"
)

// invalidRun returns why the run's measurement is not valid: one reason for
// each load step and variant that has trials, none of which is sound. A
// trial is unsound when no request of its measured window (untrimmed)
// succeeded (an idle trial sends none), when
// it could not be analysed, or when it carries a flag that invalidates it
// (see invalidates). Trials left out because they were cut short are not
// judged (they are missing, which Partial reports), unless they were kept
// in the comparison. The result is empty for a valid run.
func invalidRun(m *record.Manifest, trials []*record.Trial, s *Summary, includeInterrupted bool) []Invalidity {
	costs := map[int]*TrialCosts{}
	for _, tc := range s.Trials {
		costs[tc.Index] = tc
	}
	type key struct {
		step    int
		variant string
	}
	type tally struct {
		label          string
		n, failed, bad int
		unanalysed     int
		codes          map[string]int
	}
	tallies := map[key]*tally{}
	for _, t := range trials {
		if t.Interrupted && !includeInterrupted {
			continue
		}
		k := key{t.Step, t.Variant}
		tl := tallies[k]
		if tl == nil {
			tl = &tally{label: stepOf(m, t).Label(), codes: map[string]int{}}
			tallies[k] = tl
		}
		tl.n++
		tc := costs[t.Index]
		unsound := false
		if tc == nil {
			tl.unanalysed++
			unsound = true
		}
		var ok uint64
		for _, iv := range t.Intervals {
			ok += iv.OK
		}
		if bad, _ := failed(t); t.Job != nil || t.Startup != nil {
			ok = 1
			if bad {
				ok = 0
			}
		} else if t.Idle {
			ok = 1 // an idle trial sends no request to succeed
		}
		if ok == 0 {
			tl.failed++
			unsound = true
		}
		if tc != nil {
			seen := map[string]bool{}
			for _, f := range tc.Flags {
				if Invalidates(f.Code) && !seen[f.Code] {
					seen[f.Code] = true
					tl.codes[f.Code]++
					unsound = true
				}
			}
		}
		if unsound {
			tl.bad++
		}
	}
	var keys []key
	for k := range tallies {
		keys = append(keys, k)
	}
	order := func(v string) int {
		if i := slices.Index(m.Variants, v); i >= 0 {
			return i
		}
		return len(m.Variants)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.step != b.step {
			return a.step - b.step
		}
		if d := order(a.variant) - order(b.variant); d != 0 {
			return d
		}
		return strings.Compare(a.variant, b.variant)
	})
	var out []Invalidity
	for _, k := range keys {
		tl := tallies[k]
		if tl.bad < tl.n {
			continue
		}
		iv := Invalidity{Code: InvalidUnsound, Variant: k.variant, Step: tl.label, Trials: tl.n, Failed: tl.failed,
			Jobs: m.Workload != "" && m.Workload != "load", Unanalysed: tl.unanalysed}
		for _, c := range slices.Sorted(maps.Keys(tl.codes)) {
			if c == FlagErrors && tl.failed == tl.codes[c] {
				continue // said already: no request succeeded
			}
			iv.Flagged = append(iv.Flagged, FlagCount{Code: c, Trials: tl.codes[c]})
		}
		out = append(out, iv)
	}
	return out
}

// unanswered returns why a run in precision mode did not measure what it
// planned: some variant's primary cost, at some load step, has no
// interval at all (its budget ended the step before an interval's two
// rounds), so the run answers nothing about it. One reason per step and
// variant; none for a run with fixed rounds.
func unanswered(m *record.Manifest, s *Summary) []Invalidity {
	if m == nil || m.Precision == nil {
		return nil
	}
	var targets []string
	for c := range m.Precision.Targets {
		targets = append(targets, c)
	}
	slices.Sort(targets)
	var out []Invalidity
	for _, st := range s.Steps {
		if st.Idle {
			continue // no request for a target to aim at (DecideIdle)
		}
		for _, v := range st.Variants {
			if v.Name == m.Baseline || v.Name == m.Control {
				continue
			}
			var missing []string
			for _, c := range targets {
				cr, ok := costResult(v.Costs, Cost(c))
				// A change of fewer than 2 paired rounds has no interval;
				// one that does not compare (n/a) has none by design.
				if !ok || cr.Delta == nil || (cr.Delta.CILow == nil && cr.Delta.N < 2) {
					missing = append(missing, Info(Cost(c)).Label)
				}
			}
			if len(missing) == 0 {
				continue
			}
			out = append(out, Invalidity{Code: InvalidUnanswered, Variant: v.Name, Step: st.Label(), Costs: missing, Rounds: v.Rounds})
		}
	}
	return out
}

// InvalidCode names why a load step and variant make a run invalid.
type InvalidCode string

// Why a run is invalid (Invalidity).
const (
	// InvalidUnsound: none of the variant's trials at the step is sound.
	InvalidUnsound InvalidCode = "unsound"
	// InvalidUnanswered: in precision mode, the run ended the step before
	// the variant's primary costs had an interval.
	InvalidUnanswered InvalidCode = "unanswered"
)

// Invalidity is one load step and variant that makes a run invalid, with
// the counts a report's words give.
type Invalidity struct {
	Code    InvalidCode
	Variant string
	// Step is the load step's label.
	Step string
	// Trials is the variant's trials at the step; of them, Failed had no
	// request succeed (or, with Jobs, failed as a job or start-up run),
	// Unanalysed could not be analysed, and Flagged carry flags that
	// invalidate them (InvalidUnsound).
	Trials     int
	Failed     int
	Jobs       bool
	Unanalysed int
	Flagged    []FlagCount
	// Costs are the labels of the primary costs without an interval, and
	// Rounds the rounds compared (InvalidUnanswered).
	Costs  []string
	Rounds int
}

// FlagCount is how many trials carry a flag.
type FlagCount struct {
	Code   string
	Trials int
}
