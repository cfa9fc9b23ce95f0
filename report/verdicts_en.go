package report

import (
	"fmt"

	"github.com/tollperf/toll/analyze"
)

// The words of analyze's verdicts and gate findings in English, as
// warnings_en.go holds those of its warnings: analyze says how a change
// reads (analyze.Reading) and what a gate found (analyze.GateFinding),
// and these functions say it. A new language of output is a file like
// this one.

// DeltaVerdict returns change d of a variant against the baseline in
// English ("+3.1% ± 0.8%", "~", "n/a (…)"), or the words it was read back
// with from a summary.json (analyze.ReadStored).
func DeltaVerdict(d *analyze.Delta) string {
	r := d.Reading
	switch r.Code {
	case analyze.ReadStored:
		return d.Verdict
	case analyze.ReadNoPairs:
		return "n/a (no paired rounds)"
	case analyze.ReadSame:
		return "~"
	case analyze.ReadEquivalent:
		if d.MarginPct == nil {
			return "~"
		}
		return fmt.Sprintf("equivalent: no change beyond ±%g%%", *d.MarginPct)
	}
	return readingEN(r)
}

// ChangeVerdict returns change c of a variant's overhead between two runs
// in English ("+3.1% ± 0.8%", "~ (+0.4% ± 1.2%)"), or the words it was
// read back with (analyze.ReadStored).
func ChangeVerdict(c *analyze.CostChange) string {
	r := c.Reading
	switch r.Code {
	case analyze.ReadStored:
		return c.Verdict
	case analyze.ReadSame:
		// Between runs, "no change" keeps its estimate: whether the
		// overhead moved at all is the question asked.
		return fmt.Sprintf("~ (%+.1f%% ± %.1f%%)", r.Estimate, r.HalfWidth)
	}
	return readingEN(r)
}

// readingEN returns in English a reading that gives an estimate: with its
// interval (ReadChange), or with why it has none (ReadNoInterval); or one
// that has no verdict (ReadNotComparable).
func readingEN(r analyze.Reading) string {
	switch r.Code {
	case analyze.ReadNotComparable:
		return "n/a (" + whyEN(r) + ")"
	case analyze.ReadNoInterval:
		if r.Ratio {
			return fmt.Sprintf("%+.1f%% (%s)", r.Estimate, whyEN(r))
		}
		return fmt.Sprintf("%+.*f %s (%s)", r.Digits, r.Estimate, r.Unit, whyEN(r))
	case analyze.ReadChange:
		if r.Ratio {
			return fmt.Sprintf("%+.1f%% ± %.1f%%", r.Estimate, r.HalfWidth)
		}
		return fmt.Sprintf("%+.*f ± %.*f %s", r.Digits, r.Estimate, r.Digits, r.HalfWidth, r.Unit)
	}
	return string(r.Code)
}

// whyEN returns in English why a change has no interval or no verdict.
func whyEN(r analyze.Reading) string {
	switch r.Why {
	case analyze.WhyOneRound:
		return "1 round: no interval"
	case analyze.WhyFewRounds:
		return "too few rounds for an interval"
	case analyze.WhyOneStart:
		return "1 start: no interval"
	case analyze.WhyFewStarts:
		return fmt.Sprintf("%d starts: too few for an interval", r.Count)
	case analyze.WhyOneStartEach:
		return "1 start per variant: what differs between two starts is in no interval"
	case analyze.WhySharedDuet:
		return "shared duet: each side waits for the other's CPU"
	case analyze.WhyOneMachine:
		return r.Mode + ": every side reads the one machine at once"
	}
	return string(r.Why)
}

// GateFailureText returns in English finding f of gate r, a variant and
// step at which the change lay wholly beyond the gate's threshold.
func GateFailureText(r analyze.GateResult, f analyze.GateFinding) string {
	if d := f.Delta; d != nil && d.Pct != nil && d.CILow != nil && d.CIHigh != nil {
		return fmt.Sprintf("%s at %s: %s %+.1f%% [%+.1f%%, %+.1f%%] against %s, beyond %s",
			f.Variant, f.Step, f.Label, *d.Pct, *d.CILow, *d.CIHigh, f.Baseline, r.Gate)
	}
	return fmt.Sprintf("%s at %s: %s changed %s, beyond %s", f.Variant, f.Step, f.Label, findingVerdict(f), r.Gate)
}

// GateUnjudgedText returns in English finding f, a variant and step at
// which a gate had no interval in percent to judge.
func GateUnjudgedText(f analyze.GateFinding) string {
	if f.Delta != nil {
		return fmt.Sprintf("%s at %s: %s is %s against %s: no interval in percent to judge", f.Variant, f.Step, f.Label, DeltaVerdict(f.Delta), f.Baseline)
	}
	return fmt.Sprintf("%s at %s: %s changed %s", f.Variant, f.Step, f.Label, findingVerdict(f))
}

// findingVerdict returns the verdict of the change finding f judged.
func findingVerdict(f analyze.GateFinding) string {
	switch {
	case f.Change != nil:
		return ChangeVerdict(f.Change)
	case f.Delta != nil:
		return DeltaVerdict(f.Delta)
	}
	return ""
}
