package analyze

import (
	"iter"
	"slices"
)

// ReadingCode names how a change reads: which of a report's verdicts it
// gets. analyze decides the reading and keeps the numbers its words use;
// report holds the words, one catalogue per language of output.
type ReadingCode string

// The readings of a change (Delta, CostChange).
const (
	// ReadStored: a change read back from a summary.json, whose Verdict
	// holds its words as they were written.
	ReadStored ReadingCode = ""
	// ReadNoPairs: no round paired the variant with the baseline.
	ReadNoPairs ReadingCode = "no-pairs"
	// ReadNoInterval: an estimate without an interval; Reading.Why says
	// why.
	ReadNoInterval ReadingCode = "no-interval"
	// ReadNotComparable: the run's design makes the difference
	// meaningless; Reading.Why says why.
	ReadNotComparable ReadingCode = "not-comparable"
	// ReadSame: the interval holds no change.
	ReadSame ReadingCode = "same"
	// ReadChange: the interval excludes no change; the words give the
	// estimate and the interval's half-width.
	ReadChange ReadingCode = "change"
	// ReadEquivalent: the whole interval lies within the cost's margin
	// (Delta.MarginPct), and holds no change.
	ReadEquivalent ReadingCode = "equivalent"
)

// WhyCode says why a change has no interval, or no verdict at all.
type WhyCode string

// Why a change has no interval (ReadNoInterval) or no verdict
// (ReadNotComparable).
const (
	// WhyOneRound: a single paired round.
	WhyOneRound WhyCode = "one-round"
	// WhyFewRounds: too few rounds in one of two runs compared.
	WhyFewRounds WhyCode = "few-rounds"
	// WhyOneStart: a cost measured once per start, from one start.
	WhyOneStart WhyCode = "one-start"
	// WhyFewStarts: a cost measured once per start, from Reading.Count
	// starts, fewer than an interval needs.
	WhyFewStarts WhyCode = "few-starts"
	// WhyOneStartEach: a cost that varies by start, in a run that started
	// each variant once: what differs between starts is in no interval.
	WhyOneStartEach WhyCode = "one-start-each"
	// WhySharedDuet: the sides of a duet shared their CPUs, so each
	// waited for the other's.
	WhySharedDuet WhyCode = "shared-duet"
	// WhyOneMachine: the sides, run at once (Reading.Mode), read the one
	// machine.
	WhyOneMachine WhyCode = "one-machine"
)

// Reading is how a change reads, for a report to put in words: its code
// and what the words need beyond the change's own fields. It is not part
// of summary.json, which holds the words themselves (Verdict).
type Reading struct {
	Code ReadingCode
	Why  WhyCode
	// Estimate is the change the words give: in percent for a ratio,
	// otherwise in Unit, where it is the mean of the rounds' differences
	// (the interval's centre, which may differ from Delta.Abs in its last
	// bits).
	Estimate float64
	// Ratio is set when Estimate is in percent.
	Ratio bool
	// Unit and Digits are the cost's, for an Estimate that is not a ratio.
	Unit   string
	Digits int
	// HalfWidth is the interval's half-width, in percent or Unit as
	// Estimate, for ReadChange and a CostChange's ReadSame.
	HalfWidth float64
	// Count is the starts of WhyFewStarts.
	Count int
	// Mode is the run's mode for WhyOneMachine.
	Mode string
}

// estimateReading returns the reading of code for d's estimate (Pct, or
// Abs in info's unit).
func estimateReading(code ReadingCode, d *Delta, info CostInfo) Reading {
	r := Reading{Code: code, Unit: info.Unit, Digits: info.Digits, Estimate: d.Abs}
	if d.Pct != nil {
		r.Estimate, r.Ratio = *d.Pct, true
	}
	return r
}

// withWhy returns r saying why it has no interval, n being the starts
// of WhyFewStarts.
func (r Reading) withWhy(why WhyCode, n int) Reading {
	r.Why = why
	if why == WhyFewStarts {
		r.Count = n
	}
	return r
}

// Deltas yields every change of s against its baseline: each cost's of
// each variant and service at each step, and the headlines'. A change
// the headlines share with a variant's costs is yielded twice.
func (s *Summary) Deltas() iter.Seq[*Delta] {
	return func(yield func(*Delta) bool) {
		costs := func(cs []CostResult) bool {
			for _, c := range cs {
				if c.Delta != nil && !yield(c.Delta) {
					return false
				}
			}
			return true
		}
		for _, st := range s.Steps {
			for _, v := range st.Variants {
				if !costs(v.Costs) {
					return
				}
				for _, sv := range v.Services {
					if !costs(sv.Costs) {
						return
					}
				}
			}
		}
		for _, h := range s.Headlines {
			for _, c := range slices.Concat(h.Changes, h.Values) {
				if c.Delta != nil && !yield(c.Delta) {
					return
				}
			}
		}
	}
}

// Changes yields every change of rc between its runs.
func (rc *RunComparison) Changes() iter.Seq[*CostChange] {
	return func(yield func(*CostChange) bool) {
		for _, st := range rc.Steps {
			for _, v := range st.Variants {
				for i := range v.Costs {
					if !yield(&v.Costs[i]) {
						return
					}
				}
			}
		}
	}
}
