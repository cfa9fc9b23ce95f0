package run

import (
	"fmt"
	"slices"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// lightenRounds is how many of a run's first rounds lighten reads: a
// JVM's first round after its warm-up can still have room (90% busy)
// where the next ones have none (93%).
const lightenRounds = 3

// lighten is asked at the end of each of the first rounds of each load
// step of a run in precision mode where toll chose to load sides at once
// (every variant together, or pairs) before anything had shown what they
// ask of the CPUs they share. Where the round kept those CPUs saturated,
// the sides queued behind one another and were measured at a load none
// of them meets alone: toll then loads fewer at once
// (analyze.SidesLoad.Lighter), sets the trials so far aside
// (record.AsideDir, in a folder named for the mode they were measured in)
// and runs its plan afresh in the lighter mode, on the services running
// already. Where the load steps take their turns, a later step can
// saturate the CPUs that the steps before it left room on: every step
// then begins again in the lighter mode, so that the run has one. It
// returns the actions that follow the round, and whether it changed them.
func (r *runner) lighten(m *record.Manifest, t *plan.Trial, rest []plan.Action) ([]plan.Action, bool, error) {
	if r.can.atOnce == nil || !r.s.ChoseConcurrent() || !r.s.Precision.On {
		return rest, false, nil
	}
	kept := r.keptTrials() // every one is of the mode toll chose
	// Where the load steps share their starts, a round runs every step;
	// where they take their turns, each step's rounds count from 1.
	shared := r.prec != nil && r.prec.shared
	rounds := map[int]bool{}
	var last []*record.Trial
	for _, tr := range kept {
		if tr.Step != t.Step && !shared {
			continue
		}
		rounds[tr.Round] = true
		if tr.Round == t.Round {
			last = append(last, tr)
		}
	}
	if len(rounds) > lightenRounds {
		return rest, false, nil
	}
	load, ok := analyze.RoundLoad(m, last)
	if !ok {
		return rest, false, nil
	}
	mode := load.Lighter(r.s.Mode, r.s.Baseline)
	if mode == "" {
		return rest, false, nil
	}
	from := r.s.Mode
	was := "every variant at once"
	if r.s.Mode == scenario.ModeDuet {
		was = "a pair at once"
	}
	now := "pairs at once (a shared duet)"
	if mode == scenario.ModeSequential {
		now = "one variant at a time"
	}
	s := *r.s
	s.Lighten(mode)
	replaced, note := r.can.atOnce.Reschedule(&s)
	r.mu.Lock()
	r.s = &s
	r.notes = slices.DeleteFunc(r.notes, func(n string) bool { return n == replaced })
	for _, tr := range kept {
		delete(r.trials, tr.Index)
		if r.lastTrial[tr.Variant] == tr {
			// Its telemetry cycle ends with the next trial's services.
			delete(r.lastTrial, tr.Variant)
		}
		if s.Restart == scenario.RestartOnce && tr.Launch == t.Launch && r.carry[tr.Variant] == nil {
			// Services started once run on: their start and warm-up,
			// which the variant's first trial under that start holds,
			// pass to its next trial (carryStart).
			if r.carry == nil {
				r.carry = map[string]*record.Trial{}
			}
			r.carry[tr.Variant] = tr
		}
	}
	r.mu.Unlock()
	if note != "" {
		r.note(note)
	}
	for _, tr := range kept {
		if err := r.dir.SetAside(tr, from); err != nil {
			return rest, false, err
		}
	}
	// The services of the round stop as planned (a start every round), or
	// run on, warmed already (started once): the new plan's first starts
	// are theirs.
	var next []plan.Action
	for _, a := range rest {
		if a.Kind != plan.Stop {
			break
		}
		next = append(next, a)
	}
	p := plan.New(r.s, m.Seed)
	actions := p.Actions
	if r.s.Restart == scenario.RestartOnce {
		for len(actions) > 0 && actions[0].Kind == plan.Start {
			actions = actions[1:]
		}
	}
	next = append(next, actions...)
	m.Mode = r.s.Mode
	if !r.s.Concurrent() {
		m.Layout.DuetCPUs = nil
	}
	m.Chosen = ChosenSchedule(r.s)
	m.Chosen.BusyPct = load.Busiest()
	m.Planned = planned(p)
	if m.Precision != nil {
		m.Precision.Steps = nil // the stopping rule's record begins again too
	}
	r.mu.Lock()
	r.total, r.planned = r.done-len(kept)+countTrials(actions), len(p.Trials())
	r.done -= len(kept)
	if r.prec != nil {
		r.prec.again()
	}
	r.mu.Unlock()
	where := fmt.Sprintf("round %d", t.Round)
	if t.Step > 0 && !shared {
		where = fmt.Sprintf("round %d of load step %d", t.Round, t.Step+1)
		now += ", every load step again"
	}
	events{r}.Say(fmt.Sprintf("%s kept the services' CPUs %.0f%% busy through %s, past what the sides meet alone: %s from now on; the trials so far are set aside in %s/%s",
		was, load.Busiest(), where, now, record.AsideDir, from))
	return next, true, r.dir.WriteManifest(m)
}

// carryStart gives tr what the trial set aside before it under the same
// start of its variant's services held of that start (lighten): the
// variant warm-up that came before it, with its load's origin, and which
// services were started for it. The report reads a start's warm-up and
// start-up from its first trial.
func carryStart(tr, aside *record.Trial) {
	if aside.VariantWarmup != nil || aside.VariantWarmupS > 0 {
		tr.Start, tr.VariantWarmupS, tr.VariantWarmup = aside.Start, aside.VariantWarmupS, aside.VariantWarmup
	}
	for i := range tr.Services {
		for _, a := range aside.Services {
			if a.Name == tr.Services[i].Name && a.Started {
				tr.Services[i].Started = true
			}
		}
	}
}
