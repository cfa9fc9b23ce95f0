package local

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/scenario"
)

// TestWarmupPhases checks the load of each phase of a variant warm-up:
// with load.variant_warmup_until and a warm-up load of its own, the users,
// the rate and then the trial's own load; otherwise one phase. A side
// warmed again beside a fresh partner keeps its trial's load throughout.
func TestWarmupPhases(t *testing.T) {
	until := &scenario.WarmupUntil{JITBelow: scenario.Duration(5 * time.Millisecond), Over: scenario.Duration(10 * time.Second)}
	open := &plan.Trial{Variant: "otel", Rate: 100}
	closed := &plan.Trial{Variant: "otel", Users: 8}
	auto := scenario.Load{VariantWarmupAuto: true, VariantWarmupUntil: until}
	autoClosed := scenario.Load{VariantWarmupAuto: true, VariantWarmupUntil: until, Users: []int{8}}
	load := func(pt *plan.Trial) string {
		if pt.Users > 0 {
			return fmt.Sprintf("%d users", pt.Users)
		}
		return fmt.Sprintf("%g/s", pt.Rate)
	}
	tests := []struct {
		name   string
		l      scenario.Load
		pt     *plan.Trial
		rewarm bool
		want   []string
		jvm    bool     // a JVM found among the services
		turn   turnWarm // a start warmed ahead, warmed again at its turn
	}{
		{"the trial's load", scenario.Load{}, open, false, []string{"100/s"}, false, turnNone},
		{"until, at the trial's load", scenario.Load{VariantWarmupUntil: until}, open, false, []string{"100/s"}, false, turnNone},
		{"users, no until", scenario.Load{VariantWarmupUsers: 2}, open, false, []string{"2 users"}, false, turnNone},
		{"rate, no until", scenario.Load{VariantWarmupRate: 600}, open, false, []string{"600/s"}, false, turnNone},
		{"users until", scenario.Load{VariantWarmupUsers: 2, VariantWarmupUntil: until}, open, false, []string{"2 users", "100/s"}, false, turnNone},
		{"rate until", scenario.Load{VariantWarmupRate: 600, VariantWarmupUntil: until}, open, false, []string{"600/s", "100/s"}, false, turnNone},
		{"users and rate until", scenario.Load{VariantWarmupUsers: 2, VariantWarmupRate: 600, VariantWarmupUntil: until}, open, false, []string{"2 users", "600/s ≤2", "100/s"}, false, turnNone},
		{"rewarmed beside a partner", scenario.Load{VariantWarmupUsers: 2, VariantWarmupRate: 600, VariantWarmupUntil: until}, open, true, []string{"100/s", "100/s ≤2", "100/s"}, false, turnNone},
		{"closed model: users until", scenario.Load{VariantWarmupUsers: 2, VariantWarmupUntil: until}, closed, false, []string{"2 users", "8 users"}, false, turnNone},
		{"chosen by toll for a JVM", auto, open, false, []string{"16 users", "400/s ≤16", "100/s"}, true, turnNone},
		{"chosen by toll, no JVM", auto, open, false, []string{"100/s"}, false, turnNone},
		{"chosen by toll for a JVM rewarmed beside a partner", auto, open, true, []string{"100/s", "100/s ≤16", "100/s"}, true, turnNone},
		{"chosen by toll for a JVM owing its rate phase", auto, open, true, []string{"400/s ≤16", "100/s"}, true, turnRate},
		{"chosen by toll for a JVM swapped in still compiling, owing its rate phase", auto, open, true, []string{"100/s", "400/s ≤16", "100/s"}, true, turnBusy | turnRate},
		{"chosen by toll for a JVM swapped in still compiling, its rate phase taken", auto, open, true, []string{"100/s"}, true, turnBusy},
		{"chosen by toll for a JVM, closed model", autoClosed, closed, false, []string{"16 users", "8 users"}, true, turnNone},
		{"the scenario's users, JVM or not", scenario.Load{VariantWarmupUsers: 3, VariantWarmupUntil: until}, open, false, []string{"3 users", "100/s"}, true, turnNone},
		{"the scenario's users and rate, owing the rate phase", scenario.Load{VariantWarmupUsers: 2, VariantWarmupRate: 600, VariantWarmupUntil: until}, open, true, []string{"600/s ≤2", "100/s"}, false, turnRate},
		{"the scenario's users and rate, swapped in still compiling", scenario.Load{VariantWarmupUsers: 2, VariantWarmupRate: 600, VariantWarmupUntil: until}, open, true, []string{"100/s", "600/s ≤2", "100/s"}, false, turnBusy | turnRate},
		{"until, at the trial's load, swapped in still compiling", scenario.Load{VariantWarmupUntil: until}, open, true, []string{"100/s"}, true, turnBusy},
	}
	for _, tt := range tests {
		shapes := warmupPhases(&scenario.Scenario{Load: tt.l}, tt.jvm, tt.turn)
		var got []string
		for _, shape := range shapes {
			got = append(got, load(shape.trial(tt.pt, tt.rewarm)))
			if shape.maxConns > 0 {
				got[len(got)-1] += fmt.Sprintf(" ≤%d", shape.maxConns)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: phases %v, want %v", tt.name, got, tt.want)
		}
		if open.Rate != 100 || open.Users != 0 || closed.Users != 8 {
			t.Fatalf("%s: a phase changed the trial itself: %+v, %+v", tt.name, open, closed)
		}
	}
}

// TestHasRatePhase checks which warm-ups have a rate phase before the
// trials' own load, the phase a start warmed beside the rounds skips and
// takes at its turn, and that warmupPhases marks that phase.
func TestHasRatePhase(t *testing.T) {
	until := &scenario.WarmupUntil{JITBelow: scenario.Duration(5 * time.Millisecond), Over: scenario.Duration(10 * time.Second)}
	for _, tt := range []struct {
		name string
		l    scenario.Load
		jvm  bool
		want bool
	}{
		{"chosen by toll for a JVM", scenario.Load{VariantWarmupAuto: true, VariantWarmupUntil: until}, true, true},
		{"chosen by toll, no JVM", scenario.Load{VariantWarmupAuto: true, VariantWarmupUntil: until}, false, false},
		{"chosen by toll for a JVM, closed model", scenario.Load{VariantWarmupAuto: true, VariantWarmupUntil: until, Users: []int{8}}, true, false},
		{"the scenario's rate until", scenario.Load{VariantWarmupRate: 600, VariantWarmupUntil: until}, false, true},
		{"the scenario's rate alone", scenario.Load{VariantWarmupRate: 600}, true, false},
		{"the scenario's users until", scenario.Load{VariantWarmupUsers: 2, VariantWarmupUntil: until}, true, false},
	} {
		s := &scenario.Scenario{Load: tt.l}
		if got := hasRatePhase(s, tt.jvm); got != tt.want {
			t.Errorf("%s: rate phase %v, want %v", tt.name, got, tt.want)
		}
		marked := 0
		for i, shape := range warmupPhases(s, tt.jvm, turnNone) {
			if shape.rate {
				marked++
				if i == len(warmupPhases(s, tt.jvm, turnNone))-1 && tt.want {
					t.Errorf("%s: the rate phase is the last", tt.name)
				}
			}
		}
		if tt.want && marked != 1 {
			t.Errorf("%s: %d phases marked rate, want 1", tt.name, marked)
		}
	}
}

// TestPhaseLoads checks that a warm-up runs no phase that would send what
// the one before it sent: services all warmed again take one phase at
// their trials' own load where toll chose a JVM's three, a start owing its
// rate phase takes the rate and then its own load, one swapped in still
// compiling its own load before them, while beside a fresh service every
// phase runs.
func TestPhaseLoads(t *testing.T) {
	until := &scenario.WarmupUntil{JITBelow: scenario.Duration(5 * time.Millisecond), Over: scenario.Duration(10 * time.Second)}
	auto := scenario.Load{VariantWarmupAuto: true, VariantWarmupUntil: until}
	both := scenario.Load{VariantWarmupUsers: 2, VariantWarmupRate: 600, VariantWarmupUntil: until}
	owed := []*plan.Trial{{Variant: "baseline", Rate: 50}, {Variant: "otel", Rate: 50}}
	for _, tt := range []struct {
		name   string
		l      scenario.Load
		rewarm []bool
		turn   turnWarm
		want   int
	}{
		{"fresh starts", auto, []bool{false, false}, turnNone, 3},
		{"one side warmed again beside a fresh one", auto, []bool{true, false}, turnNone, 3},
		{"every side warmed again", auto, []bool{true, true}, turnNone, 1},
		{"every side warmed again, the scenario's phases", both, []bool{true, true}, turnNone, 1},
		{"a start owing its rate phase", auto, []bool{true, true}, turnRate, 2},
		{"a start owing its rate phase, the scenario's phases", both, []bool{true, true}, turnRate, 2},
		{"a start swapped in still compiling", auto, []bool{true, true}, turnBusy | turnRate, 3},
		{"a start swapped in still compiling, the scenario's phases", both, []bool{true, true}, turnBusy | turnRate, 3},
		{"a start swapped in still compiling, no rate phase", scenario.Load{VariantWarmupUntil: until}, []bool{true, true}, turnBusy, 1},
		{"a start swapped in still compiling, its rate phase taken beside", auto, []bool{true, true}, turnBusy, 1},
	} {
		got := phaseLoads(warmupPhases(&scenario.Scenario{Load: tt.l}, true, tt.turn), owed, tt.rewarm)
		if len(got) != tt.want {
			t.Errorf("%s: %d phases, want %d", tt.name, len(got), tt.want)
		}
		for _, ph := range got {
			if len(ph.trials) != len(owed) {
				t.Fatalf("%s: a phase loads %d services, want %d", tt.name, len(ph.trials), len(owed))
			}
		}
	}
}

// TestChosenWarmupEndsWithoutJVM checks the warm-up toll chooses: among
// services that run no JVM it ends after the short default, where a
// warm-up the scenario set to wait for the JIT waits for its maximum.
func TestChosenWarmupEndsWithoutJVM(t *testing.T) {
	b := &Backend{running: map[string]*started{}}
	for _, tt := range []struct {
		noJVM   time.Duration
		settled bool
	}{{100 * time.Millisecond, true}, {0, false}} {
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		v := b.watchJIT(ctx, jitRule{below: 5 * time.Millisecond, over: 10 * time.Second, noJVM: tt.noJVM}, nil, nil, nil, nil, nil, time.Now())
		cancel()
		if v.settled != tt.settled {
			t.Errorf("noJVM %s: settled %v, want %v", tt.noJVM, v.settled, tt.settled)
		}
	}
}

// TestKeepSpans checks what a warm-up with the CPUs to itself leaves for
// the warm-ups beside the rounds: the requests its steady rule's spans
// held, by phase and variant, a spare's counted as its variant's (the most
// of them), and nothing kept from a warm-up whose phases had none.
func TestKeepSpans(t *testing.T) {
	b := &Backend{running: map[string]*started{"otel#3": {spareOf: "otel"}}}
	phase := func(spans map[string]uint64) warmupPhase {
		return warmupPhase{verdict: jitVerdict{spans: spans}}
	}
	b.keepSpans([]warmupPhase{
		phase(map[string]uint64{"baseline": 900, "otel": 700, "otel#3": 800}),
		phase(map[string]uint64{"baseline": 300, "otel": 250, "otel#3": 100}),
	})
	want := []map[string]uint64{{"baseline": 900, "otel": 800}, {"baseline": 300, "otel": 250}}
	if fmt.Sprint(b.warmSpans) != fmt.Sprint(want) {
		t.Errorf("kept %v, want %v", b.warmSpans, want)
	}
	b.keepSpans([]warmupPhase{phase(nil)})
	if fmt.Sprint(b.warmSpans) != fmt.Sprint(want) {
		t.Errorf("a warm-up without spans replaced them: %v, want %v", b.warmSpans, want)
	}
}

// budgetEvents is a run in precision mode as a warm-up sees it: a cap on
// each warm-up, and the warm-ups spent from the budget.
type budgetEvents struct {
	noteTaker
	spent []time.Duration
}

func (e *budgetEvents) WarmupCap() (time.Duration, bool) { return time.Minute, true }
func (e *budgetEvents) WarmupSpent(d time.Duration)      { e.spent = append(e.spent, d) }
func (e *budgetEvents) SwapWarmupSpent(d time.Duration)  { e.spent = append(e.spent, d) }

// TestNoWarmupSpendsNothing checks that a trial whose services are owed
// no variant warm-up (warmed already, or idle) spends none of the budget
// and counts as no warm-up: every trial asks, and a run whose trials each
// counted one read its warm-ups' mean as nearly nothing, and warmed
// starts ahead of their turn that the budget could not hold.
func TestNoWarmupSpendsNothing(t *testing.T) {
	ev := &budgetEvents{}
	s := &scenario.Scenario{}
	s.Load.VariantWarmup = scenario.Duration(time.Minute)
	b := &Backend{s: s, events: ev, running: map[string]*started{"otel": {warmed: true}}}
	for _, pt := range []*plan.Trial{{Variant: "otel", Rate: 10}, {Variant: "baseline", Idle: true}} {
		if err := b.warmUp(context.Background(), pt); err != nil {
			t.Fatal(err)
		}
	}
	if len(ev.spent) > 0 {
		t.Errorf("warm-ups spent %v; want none: nothing was owed one", ev.spent)
	}
}

// TestFromRatePhase checks what a first warm-up tells of the warm-up a
// start warmed beside the rounds owes at its turn: from its rate phase's
// start to its last phase's last end, nothing without a rate phase.
func TestFromRatePhase(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	users := warmupPhase{origin: at(0), ends: []time.Time{at(80), at(80)}}
	rate := warmupPhase{origin: at(80), ends: []time.Time{at(160), at(168)}, rate: true}
	own := warmupPhase{origin: at(168), ends: []time.Time{at(214), at(224)}}
	for _, tt := range []struct {
		name   string
		phases []warmupPhase
		want   time.Duration
	}{
		{"users, rate, the trials' load", []warmupPhase{users, rate, own}, 144 * time.Second},
		{"ended in its rate phase", []warmupPhase{users, rate}, 88 * time.Second},
		{"no rate phase", []warmupPhase{users, own}, 0},
		{"none", nil, 0},
	} {
		if got := fromRatePhase(tt.phases); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
