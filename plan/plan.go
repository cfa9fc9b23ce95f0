// Package plan turns a scenario into the ordered list of actions a run
// performs: start a variant's services, run one trial, stop the services.
//
// A trial is one variant at one load step for one measured window. A round
// runs every variant once per load step, in a fresh random order drawn from
// a seeded source, so that slow drifts of the machine (thermal, noisy
// neighbours, caches) fall on baseline and variants alike and a run can be
// repeated exactly from its seed. The restart policy decides how often
// services are started afresh: for every trial, for every round, or once
// (or a few times over the run, with starts:, each start for a span of
// rounds).
//
// The same plan serves every workload: a load test's rounds (its load
// steps, idle ones too, under each CPU limit of a matrix, the services
// started afresh under each), a start-up experiment's repetitions (one step
// per CPU limit; each trial starts the services itself), and a job's
// repetitions (services started once).
package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tollperf/toll/scenario"
)

// Kind is what an Action does.
type Kind int

// Kinds of action.
const (
	// Start starts a variant's services and waits until they are ready.
	Start Kind = iota
	// Run runs one trial against a started variant.
	Run
	// RunAtOnce runs trials at the same time under identical load: the
	// baseline's and a variant's (mode: duet), or the baseline's and every
	// variant's (mode: together).
	RunAtOnce
	// Stop stops a variant's services.
	Stop
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Start:
		return "start"
	case Run:
		return "run"
	case Stop:
		return "stop"
	case RunAtOnce:
		return "run-at-once"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Action is one step of a run.
type Action struct {
	Kind    Kind
	Variant string
	// Trial is set for Run actions.
	Trial *Trial
	// Sides holds the trials of a RunAtOnce: the baseline's first, then
	// those run beside it.
	Sides []*Trial
	// CPULimit is, for Start, the CPU quota in cores every service of the
	// variant starts under (a load test's matrix step); 0 keeps each
	// service's own.
	CPULimit float64
}

// Load returns the load that a, an action of a plan of s, sends: a trial's
// warm-up and window, once for sides loaded at once and each side's in turn
// for a sliced duet (load.slice); none for a start or a stop.
func (a Action) Load(s *scenario.Scenario) time.Duration {
	trial := time.Duration(s.Load.Warmup) + time.Duration(s.Load.Duration)
	switch {
	case a.Kind == Run:
		return trial
	case a.Kind == RunAtOnce && s.Load.Slice > 0:
		return trial * time.Duration(len(a.Sides))
	case a.Kind == RunAtOnce:
		return trial
	}
	return 0
}

// Trial is one variant at one load step for one window.
type Trial struct {
	// Index numbers the trials of a run from 1 in the order they run.
	Index int
	// Round numbers the rounds from 1.
	Round int
	// Step indexes the load steps from 0; Rate is that step's arrival rate
	// (open model) or Users its number of users (closed model).
	Step  int
	Rate  float64
	Users int
	// Idle is set for a step of rate 0: the services are measured with no
	// load.
	Idle bool
	// Variant names the variant under load.
	Variant string
	// Order is the variant's position within its round, from 0.
	Order int
	// Pair names the variant a baseline trial ran beside in a duet; its
	// comparison pairs with that variant only.
	Pair string
	// CPULimit is the step's CPU quota in cores (a start-up step's, or a
	// load test's matrix step's; 0: none).
	CPULimit float64
	// Launch numbers, from 0, the start of the services the trial runs
	// under when a run that starts them once starts them several times
	// (starts): the rounds of each start share one.
	Launch int
}

// Plan is the ordered actions of a run.
type Plan struct {
	Seed    int64
	Actions []Action
}

// Trials returns the plan's trials in order.
func (p *Plan) Trials() []*Trial {
	var ts []*Trial
	for _, a := range p.Actions {
		switch a.Kind {
		case Run:
			ts = append(ts, a.Trial)
		case RunAtOnce:
			ts = append(ts, a.Sides...)
		}
	}
	return ts
}

// New plans a run of s with the given seed.
func New(s *scenario.Scenario, seed int64) *Plan {
	var variants []string
	for _, v := range s.Variants {
		variants = append(variants, v.Name)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(seed)>>32^0x9e3779b97f4a7c15))
	p := &Plan{Seed: seed}
	if s.Concurrent() {
		newDuet(s, variants, rng, p)
	} else {
		newInTurn(s, variants, rng, p)
	}
	if s.StepsShareStarts() {
		stepsInRounds(p, rng)
	}
	return p
}

// newInTurn plans a run of s whose variants take their turns, one at a
// time.
func newInTurn(s *scenario.Scenario, variants []string, rng *rand.Rand, p *Plan) {
	add := func(k Kind, v string, t *Trial, cpuLimit float64) {
		p.Actions = append(p.Actions, Action{Kind: k, Variant: v, Trial: t, CPULimit: cpuLimit})
	}
	// startAll starts vs in order under step st's limit; stopAll stops
	// them in reverse.
	startAll := func(vs []string, st scenario.Step) {
		for _, v := range vs {
			add(Start, v, nil, startLimit(s, st))
		}
	}
	stopAll := func(vs []string) {
		for i := len(vs) - 1; i >= 0; i-- {
			add(Stop, vs[i], nil, 0)
		}
	}
	// A start-up trial starts and stops the services itself: the start is
	// what it measures.
	perTrial := s.Restart == scenario.RestartPerTrial && s.Workload() != scenario.WorkloadStartup
	steps := s.Steps()
	index := 0
	for step, st := range steps {
		// With restart: once, the services run through every step that
		// shares their CPU limit: the whole run, or one setting of a
		// load test's matrix, under which they start afresh.
		if s.Restart == scenario.RestartOnce && newBlock(steps, step) {
			if step > 0 {
				stopAll(variants)
			}
			startAll(variants, st)
		}
		for round := 1; round <= s.Repetitions(); round++ {
			if s.Restart == scenario.RestartOnce && relaunch(s, round) {
				stopAll(variants)
				startAll(variants, st)
			}
			order := append([]string(nil), variants...)
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			if s.Restart == scenario.RestartPerRound {
				startAll(order, st)
			}
			for i, v := range order {
				index++
				t := &Trial{Index: index, Round: round, Step: step, Rate: st.Rate, Users: st.Users, Idle: st.Idle, CPULimit: st.CPULimit, Variant: v, Order: i, Launch: s.Launch(round)}
				if perTrial {
					add(Start, v, nil, startLimit(s, st))
				}
				add(Run, v, t, 0)
				if perTrial {
					add(Stop, v, nil, 0)
				}
			}
			if s.Restart == scenario.RestartPerRound {
				stopAll(order)
			}
		}
	}
	if s.Restart == scenario.RestartOnce {
		stopAll(variants)
	}
}

// stepsInRounds reorders p, planned step after step under one start of the
// services, so that each round runs every load step, the steps in a fresh
// random order each round (scenario.StepsShareStarts), and numbers its
// trials anew in that order. A plan with a start or a stop between its
// trials is left as it is.
func stepsInRounds(p *Plan, rng *rand.Rand) {
	isTrial := func(a Action) bool { return a.Kind == Run || a.Kind == RunAtOnce }
	first, last := slices.IndexFunc(p.Actions, isTrial), -1
	for i, a := range p.Actions {
		if isTrial(a) {
			last = i
		}
	}
	if first < 0 || !all(p.Actions[first:last+1], isTrial) {
		return
	}
	type key struct{ round, step int }
	groups := map[key][]Action{}
	var rounds []int
	steps := map[int][]int{} // by round, the steps it runs, in plan order
	for _, a := range p.Actions[first : last+1] {
		t := a.Trial
		if t == nil {
			t = a.Sides[0]
		}
		k := key{t.Round, t.Step}
		if _, ok := groups[k]; !ok {
			if _, ok := steps[t.Round]; !ok {
				rounds = append(rounds, t.Round)
			}
			steps[t.Round] = append(steps[t.Round], t.Step)
		}
		groups[k] = append(groups[k], a)
	}
	slices.Sort(rounds)
	out := append([]Action(nil), p.Actions[:first]...)
	for _, r := range rounds {
		order := steps[r]
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, st := range order {
			out = append(out, groups[key{r, st}]...)
		}
	}
	p.Actions = append(out, p.Actions[last+1:]...)
	for i, t := range p.Trials() {
		t.Index = i + 1
	}
}

// relaunch reports whether round begins a new start of the services of a
// run that starts them several times (starts).
func relaunch(s *scenario.Scenario, round int) bool {
	return round > 1 && s.Launch(round) != s.Launch(round-1)
}

// newBlock reports whether step i begins a run of steps under a CPU limit
// of their own: the first step, or one of a load test's matrix whose limit
// differs from the step before.
func newBlock(steps []scenario.Step, i int) bool {
	return i == 0 || steps[i].CPULimit != steps[i-1].CPULimit
}

// startLimit is the CPU quota a Start action before a trial of step st
// carries: the matrix step's, in a load test. A start-up experiment's
// trials start the services themselves, under their step's limit.
func startLimit(s *scenario.Scenario, st scenario.Step) float64 {
	if s.Workload() != scenario.WorkloadLoad {
		return 0
	}
	return st.CPULimit
}

// newDuet plans a run of trials at once: in a duet each round runs the
// baseline beside each other variant in turn, in a fresh random order, both
// under the same load at the same time; together, each round runs the
// baseline and every other variant at once, their order (which side's
// requests lead) fresh each round. The restart policy says when services
// start: once for the whole run, or (per-round and per-trial) around each
// duet, the baseline and its partner, and together every variant at each
// round. A duet's sides must come to it with the same history: started
// once a round, the baseline of a round's second duet would have run the
// first, warm, beside a partner that sat idle since its start, and an
// A/A twin read about 1% dearer (docs/method.md).
func newDuet(s *scenario.Scenario, variants []string, rng *rand.Rand, p *Plan) {
	var others []string
	for _, v := range variants {
		if v != s.Baseline {
			others = append(others, v)
		}
	}
	// Services start one after another, so the first started is the oldest
	// when the load begins, and a younger process may cost a little more
	// (heap growth, page faults; in calibration runs an A/A variant read
	// +0.24% in the first duet of a round, where the baseline had always
	// started first). A fresh random start order keeps that from always
	// favouring one side.
	var cpuLimit float64 // the step's, as a matrix sets it
	start := func(vs ...string) {
		vs = append([]string(nil), vs...)
		rng.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		for _, v := range vs {
			p.Actions = append(p.Actions, Action{Kind: Start, Variant: v, CPULimit: cpuLimit})
		}
	}
	startAll := func() { start(variants...) }
	stopAll := func() {
		for i := len(variants) - 1; i >= 0; i-- {
			p.Actions = append(p.Actions, Action{Kind: Stop, Variant: variants[i]})
		}
	}
	index := 0
	steps := s.Steps()
	for step, st := range steps {
		cpuLimit = st.CPULimit
		if s.Restart == scenario.RestartOnce && newBlock(steps, step) {
			if step > 0 {
				stopAll()
			}
			startAll()
		}
		for round := 1; round <= s.Rounds; round++ {
			if s.Restart == scenario.RestartOnce && relaunch(s, round) {
				stopAll()
				startAll()
			}
			launch := s.Launch(round)
			order := append([]string(nil), others...)
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			if s.Mode == scenario.ModeTogether {
				if s.Restart != scenario.RestartOnce {
					startAll()
				}
				// Order is each side's place in the round's order of
				// requests, which turns by one place a round, so that over
				// as many rounds as there are sides each takes every place
				// once.
				sides := make([]*Trial, 0, len(variants))
				for _, v := range append([]string{s.Baseline}, others...) {
					sides = append(sides, &Trial{Index: index + 1 + len(sides), Round: round, Step: step, Rate: st.Rate, Users: st.Users, Idle: st.Idle, CPULimit: st.CPULimit, Variant: v,
						Order: (len(sides) + round - 1) % len(variants), Launch: launch})
				}
				index += len(sides)
				p.Actions = append(p.Actions, Action{Kind: RunAtOnce, Variant: s.Baseline, Sides: sides})
				if s.Restart != scenario.RestartOnce {
					stopAll()
				}
				continue
			}
			// Restarted at each round or trial, a duet starts and stops
			// its own pair.
			perDuet := s.Restart != scenario.RestartOnce
			for i, v := range order {
				b := &Trial{Index: index + 1, Round: round, Step: step, Rate: st.Rate, Users: st.Users, Idle: st.Idle, CPULimit: st.CPULimit, Variant: s.Baseline, Order: i, Pair: v, Launch: launch}
				t := &Trial{Index: index + 2, Round: round, Step: step, Rate: st.Rate, Users: st.Users, Idle: st.Idle, CPULimit: st.CPULimit, Variant: v, Order: i, Launch: launch}
				index += 2
				if perDuet {
					start(s.Baseline, v)
				}
				p.Actions = append(p.Actions, Action{Kind: RunAtOnce, Variant: v, Sides: []*Trial{b, t}})
				if perDuet {
					p.Actions = append(p.Actions, Action{Kind: Stop, Variant: v}, Action{Kind: Stop, Variant: s.Baseline})
				}
			}
		}
	}
	if s.Restart == scenario.RestartOnce {
		stopAll()
	}
}

// all reports whether every action of as satisfies f.
func all(as []Action, f func(Action) bool) bool {
	return !slices.ContainsFunc(as, func(a Action) bool { return !f(a) })
}
