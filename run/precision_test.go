package run

import (
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// precisionScenario returns a scenario of two variants in precision mode,
// started once, one at a time, under load (a YAML mapping's entry: "rate:
// 10"), its load steps in turn.
func precisionScenario(t *testing.T, load string) *scenario.Scenario {
	t.Helper()
	return precisionSteps(t, load, scenario.StepsInTurn)
}

// precisionSteps is precisionScenario with its load steps taking their
// rounds as steps says (precision.steps).
func precisionSteps(t *testing.T, load, steps string) *scenario.Scenario {
	t.Helper()
	return parseApp(t, []string{"baseline", "otel"}, load+", duration: 2s",
		"{target: 3%, budget: 5m, steps: "+steps+"}", "mode: sequential\nrestart: once")
}

// parseApp parses a scenario of one measured service, toll's provider,
// with variants, its load's fields load (a YAML mapping's entries), its
// precision, and the top-level lines rest.
func parseApp(t *testing.T, variants []string, load, precision, rest string) *scenario.Scenario {
	t.Helper()
	src := `name: p
services:
  - name: app
    command: [toll, app, provider, --addr, "127.0.0.1:${port:app}"]
    ready: {tcp: "127.0.0.1:${port:app}"}
    measure: true
variants:
`
	for _, v := range variants {
		src += "  - name: " + v + "\n"
	}
	src += `load: {` + load + `, target: "http://127.0.0.1:${port:app}", requests: [{path: /}]}
precision: ` + precision + "\n" + rest + "\n"
	s, err := scenario.Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// precisionRunner returns a runner of s's plan in precision mode under
// rule, with no backend: the plan, its manifest, and the run's precision
// state.
func precisionRunner(t *testing.T, s *scenario.Scenario, rule stoppingRule) (*runner, *plan.Plan, *record.Manifest, *precisionRun) {
	t.Helper()
	dir, err := record.CreateExact(t.TempDir() + "/run")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{s: s, dir: dir}
	p := plan.New(s, 1)
	m := &record.Manifest{Planned: planned(p), Precision: precisionRecord(s)}
	r.total = len(p.Trials())
	return r, p, m, newPrecisionRun(s, rule, 0, p.Actions)
}

// drive carries out actions as execute does, with no backend: each load
// step entered (and warm, its warm-ups counted as warm), each round's end
// put to the rule, and once every step has run, the steps taken up again.
// It returns the actions run, in order.
func drive(t *testing.T, r *runner, pr *precisionRun, m *record.Manifest, actions []plan.Action, warm time.Duration) []plan.Action {
	t.Helper()
	var ran []plan.Action
	for i := 0; ; i++ {
		if i == len(actions) {
			more := r.takeUp(pr, m)
			if len(more) == 0 {
				return ran
			}
			actions = append(actions, more...)
		}
		a := actions[i]
		ran = append(ran, a)
		if tr := trialOf(a); tr != nil && tr.Step != pr.step {
			pr.enterStep(tr.Step)
			pr.warmed(warm)
		}
		if tr, ok := roundEnds(actions, i, pr.shared); ok {
			pr.thisStart++
			rest, err := r.afterRound(pr, m, tr, actions[i+1:])
			if err != nil {
				t.Fatal(err)
			}
			actions = append(actions[:i+1:i+1], rest...)
		}
	}
}

// scriptedRule answers the rounds of a test: stop after stopAt rounds,
// and ask for a new start after each round in newStartAfter.
type scriptedRule struct {
	stopAt        int
	newStartAfter map[int]bool
	seen          []roundState
}

func (s *scriptedRule) afterRound(_ *record.Manifest, _ []*record.Trial, st roundState) (roundDecision, error) {
	s.seen = append(s.seen, st)
	stop := st.Rounds >= s.stopAt
	return roundDecision{Stop: stop, NewStart: s.newStartAfter[st.Rounds], Record: record.PrecisionStep{Stop: map[bool]string{true: "reached", false: "continue"}[stop]}}, nil
}

// TestPrecisionExtendsAndStopsThePlan drives a plan through afterRound as
// execute does: the rule's new starts put a stop and a start of every
// variant before the next round and number the later trials' start anew,
// and its stop drops the step's rounds still planned but keeps the final
// stops.
func TestPrecisionExtendsAndStopsThePlan(t *testing.T) {
	s := precisionScenario(t, "rate: 10")
	if !s.Precision.On || s.Rounds < 10 {
		t.Fatalf("precision %v, rounds %d", s.Precision.On, s.Rounds)
	}
	rule := &scriptedRule{stopAt: 6, newStartAfter: map[int]bool{3: true}}
	r, p, m, pr := precisionRunner(t, s, rule)
	// The first start's variant warm-ups, as warmUp counts them.
	pr.warmed(30 * time.Second)
	ran := drive(t, r, pr, m, p.Actions, 30*time.Second)
	var trials, starts, stops int
	for _, a := range ran {
		switch a.Kind {
		case plan.Run:
			trials++
			if want := map[bool]int{true: 0, false: 1}[a.Trial.Round <= 3]; a.Trial.Launch != want {
				t.Errorf("round %d ran under start %d, want %d", a.Trial.Round, a.Trial.Launch, want)
			}
		case plan.Start:
			starts++
		case plan.Stop:
			stops++
		}
	}
	if trials != 12 || starts != 4 || stops != 4 {
		t.Errorf("ran %d trials, %d starts, %d stops; want 12 (6 rounds × 2), 4 and 4", trials, starts, stops)
	}
	if ran[len(ran)-1].Kind != plan.Stop {
		t.Errorf("the run ends with %v, not a stop", ran[len(ran)-1].Kind)
	}
	if len(m.Planned) != 12 || m.Starts != 2 || len(m.Precision.Steps) != 1 || m.Precision.Steps[0].Stop != "reached" || m.Precision.Steps[0].Rounds != 6 {
		t.Errorf("manifest: %d planned, %d starts, precision %+v", len(m.Planned), m.Starts, m.Precision)
	}
	if st := rule.seen[0]; st.StartTime < 30*time.Second || st.RoundTime >= 30*time.Second {
		t.Errorf("round 1's state %+v: want the warm-up in the start's time, not the round's", st)
	}
	if st := rule.seen[3]; st.Starts != 2 || st.RoundsThisStart != 1 || st.Budget <= 0 || st.Budget > 5*time.Minute {
		t.Errorf("round 4's state %+v: want the second start, its first round, the step's budget", st)
	}
}

// TestResumeLaunches checks that a resumed run in precision mode runs its
// remaining trials under a start after those its kept trials ran under.
func TestResumeLaunches(t *testing.T) {
	a, b, c := &plan.Trial{Step: 0}, &plan.Trial{Step: 1}, &plan.Trial{Step: 0}
	actions := []plan.Action{{Kind: plan.Start}, {Kind: plan.Run, Trial: a}, {Kind: plan.RunAtOnce, Sides: []*plan.Trial{c}}, {Kind: plan.Run, Trial: b}}
	resumeLaunches(actions, map[int]int{0: 3}, false)
	if a.Launch != 3 || c.Launch != 3 || b.Launch != 0 {
		t.Errorf("launches %d %d %d, want 3 3 0", a.Launch, c.Launch, b.Launch)
	}
	// Steps that share their starts go on under one, after the latest.
	resumeLaunches(actions, map[int]int{0: 2, 1: 3}, true)
	if a.Launch != 3 || c.Launch != 3 || b.Launch != 3 {
		t.Errorf("shared: launches %d %d %d, want 3 3 3", a.Launch, c.Launch, b.Launch)
	}
}

// sharedRule answers rounds that run several load steps at once: it
// records what it is asked, asks for a new start after round newStartAt,
// says that step doneStep reached its targets after round doneAt, and
// stops the rest after round stopAt.
type sharedRule struct {
	newStartAt, doneStep, doneAt, stopAt int
	seen                                 []roundState
}

func (s *sharedRule) afterRound(_ *record.Manifest, _ []*record.Trial, st roundState) (roundDecision, error) {
	s.seen = append(s.seen, st)
	d := roundDecision{Stop: st.Rounds >= s.stopAt, NewStart: st.Rounds == s.newStartAt, Steps: map[int]record.PrecisionStep{}}
	for _, step := range st.Steps {
		why := "continue"
		switch {
		case d.Stop:
			why = "budget"
		case step == s.doneStep && st.Rounds >= s.doneAt:
			why = "reached"
			d.Done = append(d.Done, step)
		}
		d.Steps[step] = record.PrecisionStep{Stop: why}
	}
	return d, nil
}

// TestStepsShareTheirStarts drives a run whose load steps share their
// starts (precision.steps: shared, the default): each round runs every
// step and is judged once, on the steps still going on, with the whole
// budget; a new start numbers every step's later trials anew; a step that
// reached its targets stops while the other goes on; and each step keeps
// its own record.
func TestStepsShareTheirStarts(t *testing.T) {
	s := precisionSteps(t, "users: [10, 20, 30]", "")
	if !s.StepsShareStarts() {
		t.Fatal("the steps of a run started once in precision mode take their turns")
	}
	rule := &sharedRule{newStartAt: 3, doneStep: 1, doneAt: 4, stopAt: 7}
	r, p, m, pr := precisionRunner(t, s, rule)
	ran := drive(t, r, pr, m, p.Actions, 0)
	rounds := map[int]map[int]bool{} // by step, its rounds
	starts := 0
	for _, a := range ran {
		switch a.Kind {
		case plan.Start:
			starts++
		case plan.Run:
			tr := a.Trial
			if rounds[tr.Step] == nil {
				rounds[tr.Step] = map[int]bool{}
			}
			rounds[tr.Step][tr.Round] = true
			if want := map[bool]int{true: 0, false: 1}[tr.Round <= 3]; tr.Launch != want {
				t.Errorf("step %d round %d ran under start %d, want %d", tr.Step, tr.Round, tr.Launch, want)
			}
		}
	}
	if len(rounds[0]) != 7 || len(rounds[1]) != 4 || len(rounds[2]) != 7 || starts != 4 {
		t.Errorf("steps ran %d, %d and %d rounds under %d starts of a variant; want 7, 4 (reached), 7 and 4", len(rounds[0]), len(rounds[1]), len(rounds[2]), starts)
	}
	if len(rule.seen) != 7 {
		t.Fatalf("the rule judged %d rounds, want 7", len(rule.seen))
	}
	for _, st := range rule.seen {
		want := []int{0, 1, 2}
		if st.Rounds > 4 {
			want = []int{0, 2}
		}
		if !slices.Equal(st.Steps, want) || st.Later || st.Budget < 4*time.Minute {
			t.Errorf("round %d judged steps %v (later %v) within %s; want %v, none later, the whole budget", st.Rounds, st.Steps, st.Later, st.Budget, want)
		}
	}
	var recs []string
	for _, st := range m.Precision.Steps {
		recs = append(recs, fmt.Sprintf("%d:%s:%d", st.Step, st.Stop, st.Rounds))
	}
	if want := []string{"0:budget:7", "1:reached:4", "2:budget:7"}; !slices.Equal(recs, want) {
		t.Errorf("records %v, want %v", recs, want)
	}
	if m.Starts != 2 || len(m.Planned) != 2*(7+4+7) {
		t.Errorf("manifest: %d starts, %d trials planned; want 2 and %d", m.Starts, len(m.Planned), 2*(7+4+7))
	}
}

// TestWarmupCap checks that in precision mode a variant warm-up lasts at
// most what is left of the budget less the load of the least rounds the
// rule stops after, in whole seconds, and at least the short default.
func TestWarmupCap(t *testing.T) {
	for _, tt := range []struct {
		spent, reserve, want time.Duration
	}{
		{time.Minute, 0, 4 * time.Minute},
		{time.Minute, time.Minute, 3 * time.Minute},
		{3 * time.Minute, 2*time.Minute + 30*time.Second, scenario.DefaultNoJVMWarmup},
		{4*time.Minute + 55*time.Second, 0, scenario.DefaultNoJVMWarmup},
		{10 * time.Minute, 0, scenario.DefaultNoJVMWarmup},
	} {
		pr := &precisionRun{budget: 5 * time.Minute, began: time.Now().Add(-tt.spent), reserve: tt.reserve}
		got := pr.warmupCap()
		if got > tt.want || got < tt.want-time.Second {
			t.Errorf("after %s of a 5m budget, %s kept for the rounds: cap %s, want %s", tt.spent, tt.reserve, got, tt.want)
		}
		if got%time.Second != 0 {
			t.Errorf("cap %s: want whole seconds, as the report writes a warm-up's maximum", got)
		}
	}
}

// TestWarmupLeavesTheLeastRounds checks that a run in precision mode keeps
// from its variant warm-ups the load of precision.min_rounds rounds of its
// plan: each trial's warm-up and window, once for sides loaded at once,
// each side's for a sliced duet's. A JVM's warm-up that took what was left
// of a 2-minute budget left the run one round, past it, and no interval.
func TestWarmupLeavesTheLeastRounds(t *testing.T) {
	for _, tt := range []struct {
		name, mode, load string
		trials           int // a round's load, in trials' warm-up and window
	}{
		{"one at a time", "mode: sequential", "", 3},
		{"every variant at once", "mode: together", "", 1},
		{"a duet, sides in turn", "mode: duet\npinning: {duet: shared}", ", slice: 50ms", 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := parseApp(t, []string{"baseline", "otel", "twin"}, "rate: 10, warmup: 1s, duration: 3s"+tt.load,
				"{target: 3%, budget: 5m, min_rounds: 4}", "restart: once\n"+tt.mode)
			p := plan.New(s, 1)
			pr := newPrecisionRun(s, nil, time.Minute, p.Actions)
			want := 4 * time.Duration(tt.trials) * 4 * time.Second
			if pr.reserve != want {
				t.Errorf("kept for the rounds: %s, want %s (4 rounds of %d trials of 4 s)", pr.reserve, want, tt.trials)
			}
			if got, most := pr.warmupCap(), 4*time.Minute-want; got > most || got < most-time.Second {
				t.Errorf("warm-up cap after 1m of 5m: %s, want %s", got, most)
			}
		})
	}
}

// TestSwapTime checks that swapping in a start warmed ahead of its turn is
// priced with the warm-up it took at its turn, the rounds stopped, as well
// as the stop: the Java agents' ten JVMs took 2 to 5 minutes there, and a
// swap priced at its stop alone was taken with three minutes left.
func TestSwapTime(t *testing.T) {
	round := 10 * time.Second
	for _, tt := range []struct {
		name       string
		stops      []time.Duration
		turnWarmed []time.Duration
		want       time.Duration
	}{
		{"before any swap, a round", nil, nil, round},
		{"stops alone", []time.Duration{2 * time.Second, 4 * time.Second}, nil, 3 * time.Second},
		{"stops and their turns' warm-ups", []time.Duration{2 * time.Second, 4 * time.Second}, []time.Duration{193 * time.Second, 117 * time.Second}, 158 * time.Second},
	} {
		pr := &precisionRun{}
		for _, d := range tt.stops {
			pr.stopTime += d
			pr.stopCount++
		}
		ev := events{r: &runner{prec: pr}}
		for _, d := range tt.turnWarmed {
			ev.SwapWarmupSpent(d)
		}
		if got := pr.swapTime(round); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
		if len(tt.turnWarmed) > 0 && pr.warmups != len(tt.turnWarmed) {
			t.Errorf("%s: %d warm-ups counted, want %d: a turn's warm-up is a warm-up too", tt.name, pr.warmups, len(tt.turnWarmed))
		}
	}
}

// TestRoomAhead checks that a start is warmed ahead of its turn only while
// what is left of the budget, less the load kept for the least rounds,
// holds a warm-up as long as the run's took on average: one warmed in the
// budget's last minute of a 2-minute JVM run never took its turn.
func TestRoomAhead(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		budget, spent, reserve time.Duration
		warmed                 []time.Duration
		beside                 time.Duration
		want                   bool
	}{
		{"no budget", 0, time.Hour, time.Minute, []time.Duration{time.Minute}, 0, true},
		{"before any warm-up", 2 * time.Minute, 5 * time.Second, time.Minute, nil, 0, true},
		{"room for one more", 10 * time.Minute, 2 * time.Minute, time.Minute, []time.Duration{time.Minute}, 0, true},
		{"a warm-up longer than what is left", 2 * time.Minute, time.Minute, time.Minute, []time.Duration{54 * time.Second}, 0, false},
		{"shorter than the average warm-up", 5 * time.Minute, 2*time.Minute + 30*time.Second, time.Minute, []time.Duration{time.Minute, 3 * time.Minute}, 0, false},
		{"longer than the average warm-up", 5 * time.Minute, time.Minute + 30*time.Second, time.Minute, []time.Duration{time.Minute, 3 * time.Minute}, 0, true},
		{"the budget spent", 2 * time.Minute, 3 * time.Minute, 0, nil, 0, false},
		{"room for a warm-up beside the rounds", 25 * time.Minute, 15 * time.Minute, 30 * time.Second, []time.Duration{203 * time.Second}, 317 * time.Second, true},
		{"shorter than a warm-up beside the rounds", 25 * time.Minute, 20 * time.Minute, 30 * time.Second, []time.Duration{203 * time.Second}, 317 * time.Second, false},
		{"a warm-up beside the rounds shorter than the average", 25 * time.Minute, 20 * time.Minute, 30 * time.Second, []time.Duration{203 * time.Second}, time.Minute, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := &precisionRun{budget: tt.budget, began: time.Now().Add(-tt.spent), reserve: tt.reserve}
			for _, d := range tt.warmed {
				pr.warmed(d)
			}
			if got := pr.roomAhead(tt.beside); got != tt.want {
				t.Errorf("roomAhead() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestStepBudgetSpent checks that a load step begun after the run's budget
// was spent gets a spent share, not the zero that means no budget.
func TestStepBudgetSpent(t *testing.T) {
	for _, tt := range []struct {
		spent time.Duration
		step  int
		lo    time.Duration
		hi    time.Duration
	}{
		{0, 0, 2*time.Minute - time.Second, 2 * time.Minute},
		{time.Minute, 1, 3*time.Minute - time.Second, 3 * time.Minute},
		{5 * time.Minute, 1, time.Nanosecond, time.Nanosecond},
		{9 * time.Minute, 1, time.Nanosecond, time.Nanosecond},
	} {
		pr := &precisionRun{budget: 4 * time.Minute, steps: 2, began: time.Now().Add(-tt.spent)}
		pr.enterStep(tt.step)
		if pr.stepBudget < tt.lo || pr.stepBudget > tt.hi {
			t.Errorf("step %d after %s of 4m: share %s, want within [%s, %s]", tt.step, tt.spent, pr.stepBudget, tt.lo, tt.hi)
		}
	}
}

// TestAnalysisRuleGoal checks that the stopping rule takes its targets and
// least rounds and starts from the scenario, and leaves the budget to each
// step's share, which every round's state carries.
func TestAnalysisRuleGoal(t *testing.T) {
	for _, tt := range []struct {
		name, precision string
		minRounds       int
	}{
		{"one target", "precision: {target: 3%, budget: 5m}", 0},
		{"least rounds", "precision: {target: 3%, budget: 5m, min_rounds: 7}", 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Parse("p.yaml", []byte(`name: p
services:
  - {name: app, command: [app], ready: {tcp: "127.0.0.1:${port:app}"}, measure: true}
load: {rate: 10, duration: 2s, target: "http://127.0.0.1:${port:app}", requests: [{path: /}]}
`+tt.precision+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			g := newAnalysisRule(s).goal
			if len(g.Targets) != len(s.Precision.Targets()) || g.Budget != 0 {
				t.Errorf("goal %+v: want the scenario's %d targets and no budget of its own", g, len(s.Precision.Targets()))
			}
			if g.MinRounds != s.Precision.MinRounds || (tt.minRounds > 0 && g.MinRounds != tt.minRounds) {
				t.Errorf("least rounds %d, want %d", g.MinRounds, s.Precision.MinRounds)
			}
		})
	}
}

// TestHeldTrialsAreTheDirectorys checks that the trials the stopping rule
// analyses in memory are those the results directory holds, in the order
// the report reads them: a resumed run's earlier ones, and each trial as it
// is kept, whatever order trials end in, a trial run again replacing the
// one it repeats.
func TestHeldTrialsAreTheDirectorys(t *testing.T) {
	dir, err := record.CreateExact(t.TempDir() + "/run")
	if err != nil {
		t.Fatal(err)
	}
	earlier := &record.Trial{Index: 2, Variant: "otel", Round: 1, Interrupted: true, Error: "cut short"}
	if err := dir.WriteTrial(earlier); err != nil {
		t.Fatal(err)
	}
	r := &runner{s: &scenario.Scenario{}, dir: dir, opt: Options{Progress: io.Discard},
		lastTrial: map[string]*record.Trial{}, trials: map[int]*record.Trial{earlier.Index: earlier}}
	for _, tr := range []*record.Trial{
		{Index: 3, Variant: "baseline", Round: 2},
		{Index: 1, Variant: "baseline", Round: 1},
		{Index: 2, Variant: "otel", Round: 1}, // run again, whole
	} {
		if err := r.keep(tr, nil); err != nil {
			t.Fatal(err)
		}
	}
	onDisk, _, err := dir.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	held := r.keptTrials()
	if len(held) != len(onDisk) {
		t.Fatalf("held %d trials, the directory %d", len(held), len(onDisk))
	}
	for i := range held {
		if held[i].Index != onDisk[i].Index || held[i].Interrupted != onDisk[i].Interrupted {
			t.Errorf("trial %d: held %d (interrupted %v), on disk %d (interrupted %v)",
				i, held[i].Index, held[i].Interrupted, onDisk[i].Index, onDisk[i].Interrupted)
		}
	}
}

// TestHeldSince checks that a target met round after round keeps the round
// it was first met from, and that one met again after a break starts anew.
func TestHeldSince(t *testing.T) {
	before := []record.TargetHeld{{Cost: "a", Round: 30, ElapsedS: 300}}
	tests := []struct {
		name   string
		before []record.TargetHeld
		held   []string
		want   []record.TargetHeld
	}{
		{"first met now", nil, []string{"a"}, []record.TargetHeld{{Cost: "a", Round: 41, ElapsedS: 410}}},
		{"met since round 30", before, []string{"a"}, []record.TargetHeld{{Cost: "a", Round: 30, ElapsedS: 300}}},
		{"another met now", before, []string{"b"}, []record.TargetHeld{{Cost: "b", Round: 41, ElapsedS: 410}}},
		{"no longer met", before, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := record.PrecisionStep{Rounds: 41, ElapsedS: 410}
			for _, c := range tt.held {
				rec.Held = append(rec.Held, record.TargetHeld{Cost: c})
			}
			heldSince(&rec, tt.before)
			if !slices.Equal(rec.Held, tt.want) {
				t.Errorf("held %+v, want %+v", rec.Held, tt.want)
			}
		})
	}
}

// stepRule answers each load step's rounds from a script: the stop reason
// after a step's round, "continue" where the script says nothing.
type stepRule struct {
	stops map[[2]int]string
	seen  []roundState
}

func (s *stepRule) afterRound(_ *record.Manifest, _ []*record.Trial, st roundState) (roundDecision, error) {
	s.seen = append(s.seen, st)
	why, ok := s.stops[[2]int{st.Step, st.Rounds}]
	if !ok {
		why = "continue"
	}
	return roundDecision{Stop: ok, Record: record.PrecisionStep{Stop: why}}, nil
}

// TestShortStepTakenUp checks that a load step that spent its share of the
// budget short of a target it can reach is taken up again once the steps
// after it have run, with what they left: its rounds still planned run
// under a new start of every variant's services, after the last step, with
// their trials back in the plan and its record marked; the later step,
// out of reach, knows the earlier one waits for its share; and a step
// whose target is out of reach is not taken up.
func TestShortStepTakenUp(t *testing.T) {
	s := precisionScenario(t, "users: [10, 20]")
	for _, tt := range []struct {
		name     string
		reach    bool // step 0 can reach its target
		takenUp  bool
		rounds0  int
		launches []int // the starts step 0's rounds ran under, in the order they ran
	}{
		{"a step short of a target it can reach", true, true, 5, []int{0, 0, 0, 1, 1}},
		{"a step out of reach", false, false, 3, []int{0, 0, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rule := &stepRule{stops: map[[2]int]string{{0, 3}: "budget", {1, 3}: "ceded", {0, 5}: "reached"}}
			r, p, m, pr := precisionRunner(t, s, rule)
			if !tt.reach {
				pr.rule = outOfReach{rule}
			}
			ran := drive(t, r, pr, m, p.Actions, 0)
			var launches []int
			steps := ""
			open := map[string]bool{}
			for _, a := range ran {
				switch a.Kind {
				case plan.Start:
					open[a.Variant] = true
				case plan.Stop:
					delete(open, a.Variant)
				case plan.Run:
					if !open[a.Trial.Variant] {
						t.Errorf("trial %d (step %d round %d) ran with %s stopped", a.Trial.Index, a.Trial.Step, a.Trial.Round, a.Trial.Variant)
					}
					if a.Trial.Variant == "baseline" {
						steps += string(rune('0' + a.Trial.Step))
						if a.Trial.Step == 0 {
							launches = append(launches, a.Trial.Launch)
						}
					}
				}
			}
			if len(open) > 0 {
				t.Errorf("services left running: %v", open)
			}
			want := "000111"
			if tt.takenUp {
				want += "00"
			}
			if steps != want || !slices.Equal(launches, tt.launches) {
				t.Errorf("steps ran %s under starts %v, want %s under %v", steps, launches, want, tt.launches)
			}
			var recs []string
			for _, st := range m.Precision.Steps {
				recs = append(recs, fmt.Sprintf("%d:%s:%d:%v", st.Step, st.Stop, st.Rounds, st.TakenUp))
			}
			wantRecs := []string{fmt.Sprintf("0:%s:%d:%v", map[bool]string{true: "reached", false: "budget"}[tt.takenUp], tt.rounds0, tt.takenUp), "1:ceded:3:false"}
			if !slices.Equal(recs, wantRecs) {
				t.Errorf("records %v, want %v", recs, wantRecs)
			}
			planned0 := 0
			for _, pt := range m.Planned {
				if pt.Step == 0 {
					planned0++
				}
			}
			if planned0 < 2*tt.rounds0 || (!tt.takenUp && planned0 != 2*tt.rounds0) {
				t.Errorf("%d of step 0's trials planned, want those it ran (%d)", planned0, 2*tt.rounds0)
			}
			for _, st := range rule.seen {
				if st.Step == 1 && st.Later != tt.takenUp {
					t.Errorf("step 1's round %d: later %v, want %v (a step waits for its share)", st.Rounds, st.Later, tt.takenUp)
				}
			}
		})
	}
}

// outOfReach answers as its rule does, with every estimate out of reach.
type outOfReach struct{ *stepRule }

func (o outOfReach) afterRound(m *record.Manifest, ts []*record.Trial, st roundState) (roundDecision, error) {
	d, err := o.stepRule.afterRound(m, ts, st)
	d.Record.MoreRounds = -1
	return d, err
}

// aheadRule asks for one new start, and plans no other, after round 2 of
// each load step, stops each step after round 4, and records the starts
// to warm ahead (StartsAhead) as each round ends.
type aheadRule struct {
	pr    *precisionRun
	ahead map[[2]int]int // step, round → pr.ahead
}

func (a *aheadRule) afterRound(_ *record.Manifest, _ []*record.Trial, st roundState) (roundDecision, error) {
	a.ahead[[2]int{st.Step, st.Rounds}] = a.pr.ahead
	stop := st.Rounds >= 4
	return roundDecision{Stop: stop, NewStart: st.Rounds == 2, Planned: 1,
		Record: record.PrecisionStep{Stop: map[bool]string{true: "reached", false: "continue"}[stop]}}, nil
}

// TestEachStepWarmsItsStartsAhead: a load step counts its own starts, so
// one that begins after another's last new start planned none beyond it
// still has the starts its minimum asks for warmed ahead, as the run's
// first step had; otherwise its second start warms at its turn, measuring
// nothing.
func TestEachStepWarmsItsStartsAhead(t *testing.T) {
	s := precisionScenario(t, "users: [10, 20]")
	rule := &aheadRule{ahead: map[[2]int]int{}}
	r, p, m, pr := precisionRunner(t, s, rule)
	rule.pr = pr
	drive(t, r, pr, m, p.Actions, time.Second)
	want := s.Precision.MinStarts - 1
	if want < 1 {
		t.Fatalf("min_starts %d: no start to warm ahead", s.Precision.MinStarts)
	}
	for step := range 2 {
		if got := rule.ahead[[2]int{step, 1}]; got != want {
			t.Errorf("load step %d, round 1: %d starts to warm ahead, want %d", step, got, want)
		}
		if got := rule.ahead[[2]int{step, 3}]; got != 0 {
			t.Errorf("load step %d, round 3 (after its planned start): %d starts to warm ahead, want 0", step, got)
		}
	}
}

// plannedRule plans three further starts from round 2 on, asks for none
// before round 5, and stops after round 6.
type plannedRule struct {
	pr    *precisionRun
	ahead map[int]int // round → pr.ahead as it ended
}

func (p *plannedRule) afterRound(_ *record.Manifest, _ []*record.Trial, st roundState) (roundDecision, error) {
	p.ahead[st.Rounds] = p.pr.ahead
	planned := 0
	if st.Rounds >= 2 {
		planned = 3
	}
	stop := st.Rounds >= 6
	return roundDecision{Stop: stop, NewStart: st.Rounds == 5, Planned: planned,
		Record: record.PrecisionStep{Stop: map[bool]string{true: "reached", false: "continue"}[stop]}}, nil
}

// TestPlannedStartsWarmAtOnce: once the rule plans more starts than are
// to be warmed ahead, they begin to warm then (StartsAhead), not at the
// next new start.
func TestPlannedStartsWarmAtOnce(t *testing.T) {
	s := precisionScenario(t, "rate: 10")
	rule := &plannedRule{ahead: map[int]int{}}
	r, p, m, pr := precisionRunner(t, s, rule)
	rule.pr = pr
	drive(t, r, pr, m, p.Actions, time.Second)
	for round, want := range map[int]int{2: s.Precision.MinStarts - 1, 3: 3, 5: 3, 6: 2} {
		if got := rule.ahead[round]; got != want {
			t.Errorf("as round %d ended: %d starts to warm ahead, want %d", round, got, want)
		}
	}
}

// warmsBeside is a backend that warms every planned start beside the
// rounds (backend.StartsAhead), none of them warming or ready yet.
type warmsBeside struct{}

func (warmsBeside) WarmStartsReady() int        { return 0 }
func (warmsBeside) WarmingAhead() int           { return 0 }
func (warmsBeside) WarmsBesideRounds() bool     { return true }
func (warmsBeside) WarmedBeside() time.Duration { return 0 }
func (warmsBeside) TurnWarmup() time.Duration   { return 0 }

// turnAhead is warmsBeside whose starts are expected to take turn at
// their turn, the rounds stopped.
type turnAhead struct {
	warmsBeside
	turn time.Duration
}

func (a turnAhead) TurnWarmup() time.Duration { return a.turn }

// swapRule records the price of a swap in each round's state.
type swapRule struct{ swap map[int]time.Duration }

func (w *swapRule) afterRound(_ *record.Manifest, _ []*record.Trial, st roundState) (roundDecision, error) {
	w.swap[st.Rounds] = st.SwapTime
	stop := st.Rounds >= 2
	return roundDecision{Stop: stop, Record: record.PrecisionStep{Stop: map[bool]string{true: "reached", false: "continue"}[stop]}}, nil
}

// TestFirstSwapPricedWithTurnWarmup checks that before any swap a start
// warmed ahead of its turn is priced with the warm-up the backend expects
// it to take there, not at a round's time alone: the Java agents' first
// swap was counted at 10 s in what more starts cost, and took 2 to 5
// minutes.
func TestFirstSwapPricedWithTurnWarmup(t *testing.T) {
	for _, turn := range []time.Duration{0, 2*time.Minute + 24*time.Second} {
		s := precisionScenario(t, "rate: 10")
		rule := &swapRule{swap: map[int]time.Duration{}}
		r, p, m, pr := precisionRunner(t, s, rule)
		r.can.ahead = turnAhead{turn: turn}
		drive(t, r, pr, m, p.Actions, 10*time.Second)
		for round := 1; round <= 2; round++ {
			if got := rule.swap[round]; got < turn || got > turn+5*time.Second {
				t.Errorf("turn %v, round %d: a swap priced at %v, want %v and a round's time", turn, round, got, turn)
			}
		}
	}
}

// warmAheadRule records whether each round's state priced a new start as
// one warmed beside the rounds.
type warmAheadRule struct{ warmAhead map[int]bool }

func (w *warmAheadRule) afterRound(_ *record.Manifest, _ []*record.Trial, st roundState) (roundDecision, error) {
	w.warmAhead[st.Rounds] = st.WarmAhead
	stop := st.Rounds >= 3
	return roundDecision{Stop: stop, Record: record.PrecisionStep{Stop: map[bool]string{true: "reached", false: "continue"}[stop]}}, nil
}

// TestNoRoomAheadCostsAWarmup checks that where what is left of the budget
// cannot warm a start ahead (roomAhead), the rule prices a new start with
// a warm-up of its own, not as one warmed beside the rounds: a 3-minute
// JVM run was otherwise given a second start, warmed for 11 s, whose rounds
// measured a JVM still compiling.
func TestNoRoomAheadCostsAWarmup(t *testing.T) {
	for _, tt := range []struct {
		name string
		warm time.Duration // the first warm-up, of a 5-minute budget
		want bool
	}{
		{"room for another", 10 * time.Second, true},
		{"no room for another", 4*time.Minute + 45*time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := precisionScenario(t, "rate: 10")
			rule := &warmAheadRule{warmAhead: map[int]bool{}}
			r, p, m, pr := precisionRunner(t, s, rule)
			r.can.ahead = warmsBeside{}
			drive(t, r, pr, m, p.Actions, tt.warm)
			for round := 1; round <= 3; round++ {
				if got := rule.warmAhead[round]; got != tt.want {
					t.Errorf("round %d: a new start priced as warmed ahead: %v, want %v", round, got, tt.want)
				}
			}
		})
	}
}
