package run

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// stoppingRule decides, after each round of a run in precision mode,
// whether its load step goes on, and whether the next round runs under a
// new start of the services, from the run's manifest and the trials kept
// so far (toll's is analysisRule).
type stoppingRule interface {
	afterRound(m *record.Manifest, trials []*record.Trial, st roundState) (roundDecision, error)
}

// roundState is where a load step of a run in precision mode stands after
// a round.
type roundState struct {
	Step int
	// Steps is, when the run's load steps share their starts
	// (scenario.StepsShareStarts), every step the round ran and still
	// goes on, judged together: their budget and starts are one. nil
	// judges Step alone.
	Steps []int
	// Rounds is the step's rounds finished.
	Rounds int
	// Starts is how many times the services started for the step with
	// restart: once (0 for other restart policies); RoundsThisStart the
	// rounds run under the latest.
	Starts          int
	RoundsThisStart int
	// Elapsed is the time the step has taken, Budget its share of the
	// run's budget.
	Elapsed time.Duration
	Budget  time.Duration
	// RoundTime is the step's mean time per round, its variant warm-ups
	// left out; StartTime what a new start of every variant's services
	// took: stopping, starting and warming them.
	RoundTime time.Duration
	StartTime time.Duration
	// ReadyStarts is the starts of every variant's services warmed ahead
	// of their turn and waiting, and SwapTime what one takes to replace
	// the current start.
	ReadyStarts int
	SwapTime    time.Duration
	// WarmingStarts is the starts of every variant warming beside the
	// rounds, not yet ready; WarmAhead is set when every start the rule
	// plans is warmed beside the rounds.
	WarmingStarts int
	WarmAhead     bool
	// WarmBeside is what the latest starts warmed beside the rounds took.
	WarmBeside time.Duration
	// RunLeft is what is left of the whole run's budget; Later is set
	// when other load steps can use what this one leaves (those after it,
	// and those before it waiting to be taken up again), which a step out
	// of reach leaves its share to.
	RunLeft time.Duration
	Later   bool
}

// roundDecision is a stoppingRule's answer.
type roundDecision struct {
	// Stop ends the step: its remaining rounds are not run.
	Stop bool
	// NewStart stops and starts every variant's services before the next
	// round (restart: once).
	NewStart bool
	// Record is written to the manifest as the step's state.
	Record record.PrecisionStep
	// Planned is the further starts the rule plans, NewStart's included.
	Planned int
	// Steps is, for a round of several steps (roundState.Steps), each
	// one's state, which Record then leaves out; Done is those of them
	// that reached their targets and stop while the others go on.
	Steps map[int]record.PrecisionStep
	Done  []int
}

// analysisRule is toll's stopping rule: after each round it analyses the
// trials kept so far as the report does and asks analyze.Decide.
type analysisRule struct {
	// goal is the scenario's precision block; its Budget is each step's
	// share, which the round's state carries.
	goal analyze.Goal
	// cache keeps each trial's costs from one round's summary to the
	// next: the run is summarized after every round, and would otherwise
	// read every trial so far again, longer round by round.
	cache *analyze.TrialCache
}

// newAnalysisRule returns the stopping rule of s's precision block.
func newAnalysisRule(s *scenario.Scenario) analysisRule {
	g := analyze.Goal{MinRounds: s.Precision.MinRounds, MinStarts: s.Precision.MinStarts}
	for c, pct := range s.Precision.Targets() {
		g.Targets = append(g.Targets, analyze.Target{Cost: analyze.Cost(c), Pct: pct})
	}
	return analysisRule{goal: g, cache: analyze.NewTrialCache()}
}

// afterRound implements stoppingRule.
func (p analysisRule) afterRound(m *record.Manifest, trials []*record.Trial, st roundState) (roundDecision, error) {
	sum, err := analyze.Summarize(m, trials, analyze.Options{Trim: analyze.Trim{Start: m.TrimStartS, End: m.TrimEndS}, CostsOnly: true, Cache: p.cache})
	if err != nil && sum == nil {
		return roundDecision{}, fmt.Errorf("analyse the trials kept: %w", err)
	}
	starts := 0
	if analyze.JVMStartTerm(sum) {
		starts = st.Starts
	}
	g := p.goal
	g.Budget = st.Budget
	prog := analyze.Progress{
		Rounds: st.Rounds, Starts: starts, RoundsThisStart: st.RoundsThisStart,
		Elapsed: st.Elapsed, RoundTime: st.RoundTime, StartTime: st.StartTime, RunLeft: st.RunLeft, Later: st.Later,
		ReadyStarts: st.ReadyStarts, SwapTime: st.SwapTime, WarmingStarts: st.WarmingStarts, WarmAhead: st.WarmAhead, WarmBeside: st.WarmBeside,
		SettleRounds: analyze.SettleRounds(sum, st.Step),
		Calibration:  analyze.CalibrationOf(m),
	}
	if len(st.Steps) > 1 {
		return sharedDecision(sum, g, prog, st.Steps), nil
	}
	var d analyze.Decision
	if analyze.StepIdle(sum, st.Step) {
		d = analyze.DecideIdle(g, prog)
	} else {
		d = analyze.Decide(g, analyze.PrecisionSeries(sum, st.Step, g.Targets), prog)
	}
	return roundDecision{Stop: d.Reason != analyze.Continue, NewStart: d.NewStart && starts > 0, Record: stepRecord(d, d.Reason), Planned: d.Planned}, nil
}

// sharedDecision judges the load steps of a round that share their starts
// and budget: together, on all their series, whether the run goes on and
// whether the next round runs under a new start; each on its own series
// for its record and whether it has reached its targets, in which case it
// stops while the others go on, leaving them its rounds' time.
func sharedDecision(sum *analyze.Summary, g analyze.Goal, prog analyze.Progress, steps []int) roundDecision {
	own := map[int][]analyze.PairedSeries{}
	var all []analyze.PairedSeries
	for _, step := range steps {
		own[step] = analyze.PrecisionSeries(sum, step, g.Targets)
		all = append(all, own[step]...)
		prog.SettleRounds = max(prog.SettleRounds, analyze.SettleRounds(sum, step))
	}
	d := analyze.Decide(g, all, prog)
	out := roundDecision{Stop: d.Reason != analyze.Continue, NewStart: d.NewStart && prog.Starts > 0, Planned: d.Planned, Steps: map[int]record.PrecisionStep{}}
	for _, step := range steps {
		ds := analyze.Decide(g, own[step], prog)
		why := d.Reason
		if why == analyze.Continue && ds.Reason == analyze.Reached {
			why = analyze.Reached
			out.Done = append(out.Done, step)
		}
		out.Steps[step] = stepRecord(ds, why)
	}
	return out
}

// stepRecord is the manifest's state of a load step that decision d
// judged, stopped for why (or going on).
func stepRecord(d analyze.Decision, why analyze.StopReason) record.PrecisionStep {
	rec := record.PrecisionStep{Stop: string(why), MoreRounds: d.MoreRounds, MoreStarts: d.MoreStarts, MoreS: d.MoreTime.Seconds()}
	for _, c := range d.Held() {
		rec.Held = append(rec.Held, record.TargetHeld{Cost: string(c)})
	}
	if d.Worst >= 0 {
		w := d.Widths[d.Worst]
		rec.Variant, rec.Cost, rec.TargetPct = w.Variant, string(w.Cost), w.TargetPct
		if w.HasCI {
			rec.HalfPct, rec.StartHalfPct = w.HalfPct, w.StartHalfPct
		}
	}
	return rec
}

// precisionRun tracks a run in precision mode across execute's actions.
type precisionRun struct {
	rule   stoppingRule
	budget time.Duration
	began  time.Time
	// reserve is what a variant warm-up leaves of the budget for the
	// rounds after it: the load of the least rounds the rule stops after
	// (precision.min_rounds).
	reserve    time.Duration
	steps      int
	step       int // the step under way, −1 before the first
	stepBegan  time.Time
	stepBudget time.Duration
	launch     int // the current start's number, in the step
	thisStart  int // rounds under it
	startTime  time.Duration
	startCount int
	// stopTime is the time the stops of the services took, over
	// stopCount new starts: what a start warmed ahead of its turn costs.
	stopTime  time.Duration
	stopCount int
	// swapWarm is the time the warm-ups of starts warmed ahead took at
	// their turn, the rounds stopped: swapping such a start in costs its
	// stop and that warm-up.
	swapWarm time.Duration
	// warmedRun and warmedStep are the variant warm-ups' time in the run
	// and in the step under way: part of what a start costs, not of a
	// round. warmups counts those of the run. Guarded by the runner's mu.
	warmedRun, warmedStep time.Duration
	warmups               int
	// spentOn is what each load step left behind took, its warm-ups
	// within it: a step taken up again goes on from there.
	spentOn map[int]stepSpent
	// short holds each load step that spent its share of the budget short
	// of its targets while other steps were still to run: what the others
	// leave of the budget goes back to it (takeUp). takenUp marks the
	// steps taken up again.
	short   map[int]shortStep
	takenUp map[int]bool
	// ahead is the further starts the rule plans after the one to be
	// warmed next (backend.Events.StartsAhead): at first the minimum
	// starts but one, then what the latest new start's decision planned
	// beyond it. Guarded by the runner's mu.
	ahead int
	// firstAhead is what ahead is when a load step begins: the starts
	// the minimum asks of it beyond its first.
	firstAhead int
	// shared is set when each round runs every load step under the same
	// start (scenario.StepsShareStarts): the steps share the budget and
	// the starts, and are judged together after each round; done holds
	// those that reached their targets and stopped.
	shared bool
	done   map[int]bool
}

// newPrecisionRun tracks a run of s in precision mode under rule, which
// carries out actions. spent is what the run's sittings before a
// resumption spent of the budget: the budget is the run's, not each
// sitting's.
func newPrecisionRun(s *scenario.Scenario, rule stoppingRule, spent time.Duration, actions []plan.Action) *precisionRun {
	pr := &precisionRun{rule: rule, budget: s.Precision.Budget.D(), began: time.Now().Add(-spent), steps: len(s.Steps()), step: -1, shared: s.StepsShareStarts()}
	pr.reserve = time.Duration(s.Precision.MinRounds) * roundLoad(s, actions)
	if s.Restart == scenario.RestartOnce {
		pr.firstAhead = max(s.Precision.MinStarts-1, 0)
		if spent == 0 {
			pr.ahead = pr.firstAhead
		}
	}
	return pr
}

// stepSpent is what a load step took until it was left: its time, and the
// variant warm-ups within it.
type stepSpent struct{ elapsed, warmed time.Duration }

// shortStep is a load step that stopped on its share of the budget short
// of its targets: the actions of its rounds still planned then, in order,
// their planned trials, the start they would have run under, and the
// rounds it had run.
type shortStep struct {
	actions []plan.Action
	planned []record.PlannedTrial
	launch  int
	rounds  int
}

// enterStep begins load step step, with its share of what is left of
// the budget: an equal share of it among the steps still to run, or for a
// step taken up again (takeUp) what it had spent and an equal share of
// what is left among it and the short steps still waiting. Its caller
// holds the runner's mu.
func (pr *precisionRun) enterStep(step int) {
	if pr.shared {
		// The steps share the whole budget, from the run's first trial.
		if pr.step < 0 {
			pr.step, pr.stepBegan = step, time.Now()
			pr.stepBudget = max(pr.budget-time.Since(pr.began), time.Nanosecond)
		}
		return
	}
	if pr.step >= 0 && !pr.stepBegan.IsZero() {
		if pr.spentOn == nil {
			pr.spentOn = map[int]stepSpent{}
		}
		pr.spentOn[pr.step] = stepSpent{time.Since(pr.stepBegan), pr.warmedStep}
	}
	pr.step, pr.stepBegan, pr.thisStart, pr.warmedStep = step, time.Now(), 0, 0
	left := pr.budget - time.Since(pr.began)
	if sp, ok := pr.spentOn[step]; ok {
		pr.stepBegan, pr.warmedStep = pr.stepBegan.Add(-sp.elapsed), sp.warmed
		pr.stepBudget = sp.elapsed + max(left/time.Duration(len(pr.short)+1), time.Nanosecond)
		return
	}
	// A budget already spent leaves the step a share of 1 ns, not 0,
	// which the rule reads as no budget at all.
	pr.stepBudget = max(left/time.Duration(max(pr.steps-step, 1)), time.Nanosecond)
	// A load step counts its own starts, from the one running as it
	// begins: the starts its minimum asks for are warmed ahead of it as
	// they were of the run's first step, whatever the step before planned.
	pr.ahead = pr.firstAhead
}

// again begins the run's load steps afresh, under a plan that loads fewer
// sides at once (lighten): the time spent is the run's, and what is left
// of the budget is shared anew among every step. Steps that share their
// starts share the whole budget already; only their start's rounds count
// from 0 again. Its caller holds the runner's mu.
func (pr *precisionRun) again() {
	pr.thisStart = 0
	if pr.shared {
		return
	}
	pr.step, pr.stepBegan, pr.warmedStep = -1, time.Time{}, 0
	pr.spentOn, pr.short, pr.takenUp, pr.done = nil, nil, nil, nil
}

// othersShort reports whether a load step other than step stopped short
// of its targets and waits to be taken up again: step's budget can go to
// it, as to the steps after it.
func (pr *precisionRun) othersShort(step int) bool {
	for s := range pr.short {
		if s != step {
			return true
		}
	}
	return false
}

// goingOn returns the load steps of a run whose steps share their starts
// that have not reached their targets, in order.
func (pr *precisionRun) goingOn() []int {
	var steps []int
	for i := range pr.steps {
		if !pr.done[i] {
			steps = append(steps, i)
		}
	}
	return steps
}

// leaveShort keeps what load step step, which spent its share of the
// budget short of its targets at round rounds under start launch, drops of
// rest (its rounds still planned, with the starts before them and the stops
// after them) and of planned, for takeUp.
func (pr *precisionRun) leaveShort(step, rounds, launch int, rest []plan.Action, planned []record.PlannedTrial) {
	sh := shortStep{launch: launch, rounds: rounds}
	prev := -1 // the step of the latest trial before an action
	for i, a := range rest {
		of := prev
		if t := trialOf(a); t != nil {
			of, prev = t.Step, t.Step
		} else if a.Kind == plan.Start {
			of = -1
			for _, b := range rest[i+1:] {
				if t := trialOf(b); t != nil {
					of = t.Step
					break
				}
			}
		}
		if of == step {
			sh.actions = append(sh.actions, a)
		}
	}
	for _, p := range planned {
		if p.Step == step {
			sh.planned = append(sh.planned, p)
		}
	}
	if len(sh.actions) == 0 {
		return
	}
	if pr.short == nil {
		pr.short = map[int]shortStep{}
	}
	pr.short[step] = sh
}

// takeUp returns, once every load step has run, the actions that take up
// again the first step that stopped short of its targets, when what is
// left of the budget holds a start of the services and two of its rounds:
// its rounds still planned, under a new start of every variant's services
// (started before them where its own starts did not start them). It puts
// their trials back in m's plan. nil when no step waits or the budget
// holds none.
func (pr *precisionRun) takeUp(s *scenario.Scenario, m *record.Manifest) []plan.Action {
	if len(pr.short) == 0 {
		return nil
	}
	step := slices.Min(slices.Collect(maps.Keys(pr.short)))
	sh := pr.short[step]
	delete(pr.short, step)
	left := pr.budget - time.Since(pr.began)
	sp := pr.spentOn[step]
	round := max(sp.elapsed-sp.warmed, 0) / time.Duration(max(sh.rounds, 1))
	start := (pr.startTime + pr.warmedRun) / time.Duration(max(pr.startCount, 1))
	if left < start+2*round {
		clear(pr.short)
		return nil
	}
	once := s.Restart == scenario.RestartOnce
	started := map[string]bool{} // by the actions kept, and running
	var need []string
	limit := 0.0
	for _, a := range sh.actions {
		switch a.Kind {
		case plan.Start:
			started[a.Variant] = true
		case plan.Stop:
			delete(started, a.Variant)
		}
		for _, t := range trialsOf(a) {
			if once {
				t.Launch = sh.launch + 1
			}
			limit = startLimit(s, t)
			if !started[t.Variant] && !slices.Contains(need, t.Variant) {
				need = append(need, t.Variant)
				started[t.Variant] = true
			}
		}
	}
	// The services its rounds ran under before are stopped: those it
	// needs start first, and those left running stop after its rounds.
	var out []plan.Action
	for _, v := range s.Variants {
		if slices.Contains(need, v.Name) {
			out = append(out, plan.Action{Kind: plan.Start, Variant: v.Name, CPULimit: limit})
		}
	}
	out = append(out, sh.actions...)
	for i := len(s.Variants) - 1; i >= 0; i-- {
		if v := s.Variants[i].Name; started[v] {
			out = append(out, plan.Action{Kind: plan.Stop, Variant: v})
		}
	}
	if once {
		m.Starts = max(m.Starts, sh.launch+2)
	}
	m.Planned = append(m.Planned, sh.planned...)
	slices.SortFunc(m.Planned, func(a, b record.PlannedTrial) int { return a.Index - b.Index })
	if pr.takenUp == nil {
		pr.takenUp = map[int]bool{}
	}
	pr.takenUp[step] = true
	return out
}

// warmupCap returns the longest a variant warm-up may take in a run in
// precision mode: what is left of the budget less the load of the least
// rounds the rule stops after, and at least scenario.DefaultNoJVMWarmup,
// so that a JVM started late still gets some. A warm-up that took the
// whole budget would leave the run one round, past the budget, and no
// interval.
func (pr *precisionRun) warmupCap() time.Duration {
	return max((pr.budget - time.Since(pr.began) - pr.reserve).Round(time.Second), scenario.DefaultNoJVMWarmup)
}

// roundLoad returns the load that the first round of actions, a plan of
// s, sends (plan.Action.Load).
func roundLoad(s *scenario.Scenario, actions []plan.Action) time.Duration {
	var d time.Duration
	for _, a := range actions {
		t := trialOf(a)
		if t == nil {
			continue
		}
		if t.Round != 1 || t.Step != 0 {
			break
		}
		d += a.Load(s)
	}
	return d
}

// roomAhead reports whether what is left of the budget holds a start
// warmed ahead of its turn: a warm-up as long as the run's took on
// average, or as the latest starts warmed beside the rounds took
// (beside), if longer, with the load of the least rounds kept after it
// (warmupCap). Beside the rounds a warm-up gets only what they leave of
// the CPUs: the Java agents' ten JVMs warmed in 3 min 23 s with the CPUs
// to themselves, and in 5 to 8 minutes beside the rounds.
// A start that could not be warmed in time would never take its turn, and
// its warm-up would load the CPUs beside the rounds for nothing.
func (pr *precisionRun) roomAhead(beside time.Duration) bool {
	if pr.budget <= 0 {
		return true
	}
	var warm time.Duration
	if pr.warmups > 0 {
		warm = pr.warmedRun / time.Duration(pr.warmups)
	}
	warm = max(warm, beside)
	return pr.budget-time.Since(pr.began)-pr.reserve >= warm
}

// warmed counts d of variant warm-up.
func (pr *precisionRun) warmed(d time.Duration) {
	pr.warmups++
	pr.warmedRun += d
	pr.warmedStep += d
}

// precisionRecord is the manifest's record of s's precision mode.
func precisionRecord(s *scenario.Scenario) *record.Precision {
	return &record.Precision{Targets: s.Precision.Targets(), BudgetS: s.Precision.Budget.D().Seconds(),
		MinRounds: s.Precision.MinRounds, MinStarts: s.Precision.MinStarts, Why: s.Precision.Why}
}

// trialOf returns the last trial action a runs (nil for a start or stop).
func trialOf(a plan.Action) *plan.Trial {
	switch a.Kind {
	case plan.Run:
		return a.Trial
	case plan.RunAtOnce:
		return a.Sides[len(a.Sides)-1]
	}
	return nil
}

// trialsOf returns every trial action a runs: its trial, or the sides it
// runs at once (none for a start or stop).
func trialsOf(a plan.Action) []*plan.Trial {
	if a.Trial != nil {
		return []*plan.Trial{a.Trial}
	}
	return a.Sides
}

// startLimit returns the CPU quota a start of the services before trial t
// takes: the load step's, in a load test's matrix (0 otherwise).
func startLimit(s *scenario.Scenario, t *plan.Trial) float64 {
	if s.Workload() != scenario.WorkloadLoad {
		return 0
	}
	return t.CPULimit
}

// heldSince dates each target rec holds: from the round the step's record
// before it dated it, when it held then too (before, nil for none), or else
// from rec's own round.
func heldSince(rec *record.PrecisionStep, before []record.TargetHeld) {
	for j := range rec.Held {
		h := &rec.Held[j]
		h.Round, h.ElapsedS = rec.Rounds, rec.ElapsedS
		for _, p := range before {
			if p.Cost == h.Cost {
				h.Round, h.ElapsedS = p.Round, p.ElapsedS
			}
		}
	}
}

// roundEnds reports whether actions[i] runs the last trial of its round:
// of its load step's round, or with shared (the steps share their starts)
// of the round that runs every step.
func roundEnds(actions []plan.Action, i int, shared bool) (*plan.Trial, bool) {
	t := trialOf(actions[i])
	if t == nil {
		return nil, false
	}
	for _, a := range actions[i+1:] {
		if n := trialOf(a); n != nil {
			return t, n.Round != t.Round || n.Step != t.Step && !shared
		}
	}
	return t, true
}

// stateAfter is where the run stands as the round that t ended ends, for
// the stopping rule: the step's time and budget, the round's time, and,
// for services started once (once), its starts and what a new one costs.
func (r *runner) stateAfter(pr *precisionRun, t *plan.Trial, once bool) roundState {
	st := roundState{Step: t.Step, Rounds: t.Round, Elapsed: time.Since(pr.stepBegan), Budget: pr.stepBudget,
		RunLeft: max(pr.budget-time.Since(pr.began), time.Nanosecond), Later: t.Step < pr.steps-1 || pr.othersShort(t.Step)}
	if pr.shared {
		st.Steps, st.Later = pr.goingOn(), false
	}
	// A round's time leaves the warm-ups out; a start's holds its own.
	st.RoundTime = max(st.Elapsed-pr.warmedStep, 0) / time.Duration(max(st.Rounds, 1))
	if once {
		st.Starts, st.RoundsThisStart = t.Launch+1, pr.thisStart
		st.StartTime = (pr.startTime + pr.warmedRun) / time.Duration(max(pr.startCount, 1))
		if r.can.ahead != nil {
			// A start warmed ahead of its turn costs the stop of the
			// current one and what it warms at its turn (swapTime).
			st.ReadyStarts = r.can.ahead.WarmStartsReady()
			// A start the budget left cannot warm ahead (roomAhead) costs
			// a warm-up of its own.
			st.WarmBeside = r.can.ahead.WarmedBeside()
			r.mu.Lock()
			room := pr.roomAhead(st.WarmBeside)
			r.mu.Unlock()
			st.WarmingStarts, st.WarmAhead = r.can.ahead.WarmingAhead(), r.can.ahead.WarmsBesideRounds() && room
			st.SwapTime = pr.swapTime(st.RoundTime + r.can.ahead.TurnWarmup())
		}
	}
	return st
}

// swapTime returns what swapping in a start warmed ahead of its turn has
// cost on average: its stop and the warm-up it took at its turn (the Java
// agents' ten JVMs took 2 to 5 minutes there, their stops seconds), or
// fallback before any swap: a round's time for the stop, and what the
// backend expects of the warm-up (backend.StartsAhead's TurnWarmup).
// Priced at a round's time alone, the first swap of the Java agents' run
// counted 10 s in the rule's estimates of what more starts cost, how many
// to plan and how to share the rounds among them, where it took 2 to 5
// minutes.
func (pr *precisionRun) swapTime(fallback time.Duration) time.Duration {
	if pr.stopCount == 0 {
		return fallback
	}
	return (pr.stopTime + pr.swapWarm) / time.Duration(pr.stopCount)
}

// afterRound asks the rule about the round that t ended, from the trials
// kept so far, records its answer in m, and returns the actions still to run: those left, less the
// step's remaining rounds when it stops, with a new start of every
// variant's services before the next round when the rule asks for one.
func (r *runner) afterRound(pr *precisionRun, m *record.Manifest, t *plan.Trial, rest []plan.Action) ([]plan.Action, error) {
	once := r.s.Restart == scenario.RestartOnce
	st := r.stateAfter(pr, t, once)
	d, err := pr.rule.afterRound(m, r.keptTrials(), st)
	if err != nil {
		return rest, fmt.Errorf("precision: after round %d: %w", t.Round, err)
	}
	recs := d.Steps
	if recs == nil {
		recs = map[int]record.PrecisionStep{t.Step: d.Record}
	}
	for _, step := range slices.Sorted(maps.Keys(recs)) {
		rec := recs[step]
		rec.Step, rec.Rounds, rec.ElapsedS, rec.TakenUp = step, t.Round, st.Elapsed.Seconds(), pr.takenUp[step]
		if once {
			rec.Starts = st.Starts
		}
		steps := m.Precision.Steps
		if i := slices.IndexFunc(steps, func(p record.PrecisionStep) bool { return p.Step == step }); i >= 0 {
			heldSince(&rec, steps[i].Held)
			steps[i] = rec
		} else {
			heldSince(&rec, nil)
			m.Precision.Steps = append(steps, rec)
		}
	}
	rec := recs[t.Step]
	// The manifest's rounds are those run, not the plan's ceiling.
	m.Rounds = 0
	for _, p := range m.Precision.Steps {
		m.Rounds = max(m.Rounds, p.Rounds)
	}
	// The steps whose rounds still to run are dropped: the step judged,
	// or all those judged together, when the rule stops; those that
	// reached their targets while others go on.
	stopped := map[int]bool{}
	for _, step := range d.Done {
		stopped[step] = true
	}
	switch {
	case d.Stop:
		// A step that spent its share short of a target it can reach,
		// while other steps are still to run, keeps them to be taken up
		// again with what those leave.
		if !pr.shared && rec.Stop == string(analyze.BudgetSpent) && rec.MoreRounds >= 0 && t.Step < pr.steps-1 && !pr.takenUp[t.Step] {
			pr.leaveShort(t.Step, t.Round, t.Launch, rest, m.Planned)
		}
		for step := range recs {
			stopped[step] = true
		}
	case d.NewStart && once:
		r.mu.Lock()
		pr.ahead = max(d.Planned-1, 0)
		r.mu.Unlock()
		var restart []plan.Action
		for i := len(r.s.Variants) - 1; i >= 0; i-- {
			restart = append(restart, plan.Action{Kind: plan.Stop, Variant: r.s.Variants[i].Name})
		}
		for _, v := range r.s.Variants {
			restart = append(restart, plan.Action{Kind: plan.Start, Variant: v.Name, CPULimit: startLimit(r.s, t)})
		}
		for _, a := range rest {
			for _, x := range trialsOf(a) {
				if x.Step == t.Step || pr.shared {
					x.Launch = t.Launch + 1
				}
			}
		}
		rest = append(restart, rest...)
		pr.thisStart = 0
		m.Starts = max(m.Starts, t.Launch+2)
	case once && d.Planned > pr.ahead:
		// The rule plans more starts than are warming: those warmed
		// beside the rounds begin to warm now, not at the next start.
		r.mu.Lock()
		pr.ahead = d.Planned
		r.mu.Unlock()
	}
	if len(stopped) > 0 {
		// Their rounds still to run are dropped, with the starts and
		// stops that would run no trial.
		skip := map[int]bool{}
		for _, a := range rest {
			for _, x := range trialsOf(a) {
				if stopped[x.Step] {
					skip[x.Index] = true
				}
			}
		}
		rest = remaining(rest, skip, once)
		m.Planned = slices.DeleteFunc(m.Planned, func(p record.PlannedTrial) bool { return skip[p.Index] })
		r.total -= len(skip)
		if pr.done == nil {
			pr.done = map[int]bool{}
		}
		maps.Copy(pr.done, stopped)
	}
	return rest, r.dir.WriteManifest(m)
}

// resumeLaunches numbers the trials still to run of a resumed run in
// precision mode under a start of their own: the services start again
// (remaining), after the starts the kept trials ran under (next, by
// step), which the rule counts.
func resumeLaunches(actions []plan.Action, next map[int]int, shared bool) {
	last := 0 // the next start of steps that share theirs: the latest's
	for _, n := range next {
		last = max(last, n)
	}
	for _, a := range actions {
		for _, x := range trialsOf(a) {
			x.Launch = next[x.Step]
			if shared {
				x.Launch = last
			}
		}
	}
}

// targetsText says what a run in precision mode aims at: "±3% on
// cpu_per_request_ms".
func targetsText(s *scenario.Scenario) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(s.Precision.Targets())) {
		parts = append(parts, fmt.Sprintf("±%g%% on %s", s.Precision.Targets()[c], c))
	}
	return strings.Join(parts, ", ")
}
