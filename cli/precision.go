package cli

import (
	"context"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/run"
	"github.com/tollperf/toll/scenario"
)

// precisionRule is toll's stopping rule for a run in precision mode: after
// each round it analyses the finished trials as the report does and asks
// analyze.Decide.
type precisionRule struct {
	goal analyze.Goal
}

var _ run.PrecisionRule = precisionRule{}

// newPrecisionRule returns the rule for s's precision block.
func newPrecisionRule(s *scenario.Scenario) precisionRule {
	g := analyze.Goal{MinRounds: s.Precision.MinRounds, MinStarts: s.Precision.MinStarts, Budget: s.Precision.Budget.D()}
	for c, pct := range s.Precision.Targets() {
		g.Targets = append(g.Targets, analyze.Target{Cost: analyze.Cost(c), Pct: pct})
	}
	return precisionRule{goal: g}
}

// AfterRound implements run.PrecisionRule.
func (p precisionRule) AfterRound(ctx context.Context, dir *record.Dir, st run.RoundState) (run.RoundDecision, error) {
	m, err := dir.ReadManifest()
	if err != nil {
		return run.RoundDecision{}, err
	}
	trials, _, err := dir.ReadTrials() // a trial this run could not read back is left out, as the report leaves it
	if err != nil {
		return run.RoundDecision{}, err
	}
	sum, err := analyze.Summarize(m, trials, analyze.Options{Trim: analyze.Trim{Start: m.TrimStartS, End: m.TrimEndS}})
	if err != nil && sum == nil {
		return run.RoundDecision{}, err
	}
	starts := 0
	if analyze.JVMStartTerm(sum) {
		starts = st.Starts
	}
	g := p.goal
	g.Budget = st.Budget
	d := analyze.Decide(g, analyze.PrecisionSeries(sum, st.Step, g.Targets), analyze.Progress{
		Rounds: st.Rounds, Starts: starts, RoundsThisStart: st.RoundsThisStart,
		Elapsed: st.Elapsed, RoundTime: st.RoundTime, StartTime: st.StartTime, RunLeft: st.RunLeft, Later: st.Later,
		Calibration: analyze.CalibrationOf(m),
	})
	rec := record.PrecisionStep{Stop: string(d.Reason), MoreRounds: d.MoreRounds, MoreStarts: d.MoreStarts, MoreS: d.MoreTime.Seconds()}
	if d.Worst >= 0 {
		w := d.Widths[d.Worst]
		rec.Variant, rec.Cost, rec.TargetPct = w.Variant, string(w.Cost), w.TargetPct
		if w.HasCI {
			rec.HalfPct = w.HalfPct
		}
	}
	return run.RoundDecision{Stop: d.Reason != analyze.Continue, NewStart: d.NewStart && starts > 0, Record: rec}, nil
}
