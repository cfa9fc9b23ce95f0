package run

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

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
	src := `name: p
services:
  - name: app
    command: [toll, app, provider, --addr, "127.0.0.1:${port:app}"]
    ready: {tcp: "127.0.0.1:${port:app}"}
    measure: true
variants:
  - name: baseline
  - name: otel
load: {rate: 10, duration: 2s, target: "http://127.0.0.1:${port:app}", requests: [{path: /}]}
precision: {target: 3%, budget: 5m}
mode: sequential
restart: once
`
	s, err := scenario.Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Precision.On || s.Rounds < 10 {
		t.Fatalf("precision %v, rounds %d", s.Precision.On, s.Rounds)
	}
	dir, err := record.CreateExact(t.TempDir() + "/run")
	if err != nil {
		t.Fatal(err)
	}
	rule := &scriptedRule{stopAt: 6, newStartAfter: map[int]bool{3: true}}
	r := &runner{s: s, dir: dir}
	p := plan.New(s, 1)
	m := &record.Manifest{Planned: planned(p)}
	r.total = len(p.Trials())
	pr := newPrecisionRun(s, rule, 0)
	m.Precision = precisionRecord(s)
	actions := p.Actions
	// The first start's variant warm-ups, as warmUp counts them.
	pr.warmed(30 * time.Second)
	var ran []plan.Action
	for i := 0; i < len(actions); i++ {
		a := actions[i]
		ran = append(ran, a)
		if tr := trialOf(a); tr != nil && tr.Step != pr.step {
			pr.enterStep(tr.Step)
			pr.warmed(30 * time.Second)
		}
		if tr, ok := roundEnds(actions, i); ok {
			pr.thisStart++
			rest, err := r.afterRound(pr, m, tr, actions[i+1:])
			if err != nil {
				t.Fatal(err)
			}
			actions = append(actions[:i+1:i+1], rest...)
		}
	}
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
	resumeLaunches(actions, map[int]int{0: 3})
	if a.Launch != 3 || c.Launch != 3 || b.Launch != 0 {
		t.Errorf("launches %d %d %d, want 3 3 0", a.Launch, c.Launch, b.Launch)
	}
}

// TestWarmupCap checks that in precision mode a variant warm-up lasts at
// most what is left of the budget, in whole seconds, and at least the
// short default.
func TestWarmupCap(t *testing.T) {
	for _, tt := range []struct {
		spent, want time.Duration
	}{
		{time.Minute, 4 * time.Minute},
		{4*time.Minute + 55*time.Second, scenario.DefaultNoJVMWarmup},
		{10 * time.Minute, scenario.DefaultNoJVMWarmup},
	} {
		pr := &precisionRun{budget: 5 * time.Minute, began: time.Now().Add(-tt.spent)}
		got := pr.warmupCap()
		if got > tt.want || got < tt.want-time.Second {
			t.Errorf("after %s of a 5m budget: cap %s, want %s", tt.spent, got, tt.want)
		}
		if got%time.Second != 0 {
			t.Errorf("cap %s: want whole seconds, as the report writes a warm-up's maximum", got)
		}
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
