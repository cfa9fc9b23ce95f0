package analyze

import (
	"maps"
	"slices"

	"github.com/tollperf/toll/record"
)

// FitBusy is the most, in percent, that the sides toll loads at once may
// keep the CPUs they share busy, by what a round showed of each: room
// below SaturatedBusy for what varies from round to round.
const FitBusy = 80.0

// SidesLoad is what the sides of one round, loaded at once on shared CPUs
// (a shared duet, or every variant together), asked of those CPUs, in each
// of its load steps.
type SidesLoad struct {
	// CPUs is how many CPUs the sides shared.
	CPUs int
	// Steps holds the round's figures at each load step.
	Steps []StepLoad
}

// StepLoad is what the sides of one load step of a round asked of the CPUs
// they shared.
type StepLoad struct {
	Step int
	// BusyPct is how busy the busiest shared CPU was over the trials'
	// windows, less what neighbours at idle priority ran there; OtherPct
	// is what of it the sides' services did not use (the kernel, other
	// processes).
	BusyPct, OtherPct float64
	// Cores maps each side to the CPU, in cores, its services would use at
	// the step's target rate: what they used, times the target rate over
	// the rate they achieved (sides that queue behind one another fall
	// short of it).
	Cores map[string]float64
	// Closed is set for a closed model's step (users, no rate): its users
	// send as fast as the sides answer, so the sides share what the CPUs
	// give by design, and what one would use alone is not known from what
	// it used beside the others.
	Closed bool
}

// RoundLoad reads, from the trials of one round of m's run loaded at once
// on shared CPUs (SharedDuet), what the sides asked of those CPUs. ok is
// false when the run did not share them or the trials hold no reading.
func RoundLoad(m *record.Manifest, trials []*record.Trial) (SidesLoad, bool) {
	if !SharedDuet(m) {
		return SidesLoad{}, false
	}
	var sides []sideTrial
	for _, tr := range trials {
		tc, err := SummarizeTrial(tr, Trim{Start: m.TrimStartS, End: m.TrimEndS})
		if err == nil {
			sides = append(sides, sideTrial{rate: tr.TargetRate, tc: tc})
		}
	}
	return sidesLoad(parseCPUList(m.Layout.DuetCPUs[0]), sides)
}

// sideTrial is one side's trial of a round loaded at once, and the rate
// its load step aimed at (0 for a closed model's).
type sideTrial struct {
	rate float64
	tc   *TrialCosts
}

// sidesLoad is RoundLoad over the sides' trials, on the shared CPUs cpus.
func sidesLoad(cpus []int, sides []sideTrial) (SidesLoad, bool) {
	if len(cpus) == 0 {
		return SidesLoad{}, false
	}
	type stepSums struct {
		busy, used float64
		cores      map[string]float64
		closed     bool
	}
	by := map[int]*stepSums{}
	for _, side := range sides {
		tc := side.tc
		used, ok := tc.Costs[CPUCores]
		if tc.Excluded || !ok {
			continue
		}
		s := by[tc.Step]
		if s == nil {
			s = &stepSums{cores: map[string]float64{}}
			by[tc.Step] = s
		}
		s.busy = max(s.busy, busiestOf(tc, cpus))
		s.used += used
		s.closed = s.closed || side.rate <= 0
		need := used
		if got := tc.Costs[Throughput]; side.rate > 0 && got > 0 && got < side.rate {
			need *= side.rate / got
		}
		s.cores[tc.Variant] = max(s.cores[tc.Variant], need)
	}
	if len(by) == 0 {
		return SidesLoad{}, false
	}
	l := SidesLoad{CPUs: len(cpus)}
	for _, step := range slices.Sorted(maps.Keys(by)) {
		s := by[step]
		other := max(s.busy-100*s.used/float64(len(cpus)), 0)
		l.Steps = append(l.Steps, StepLoad{Step: step, BusyPct: s.busy, OtherPct: other, Cores: s.cores, Closed: s.closed})
	}
	return l, true
}

// Busiest returns how busy the busiest shared CPU was at any load step.
func (l SidesLoad) Busiest() float64 {
	most := 0.0
	for _, s := range l.Steps {
		most = max(most, s.BusyPct)
	}
	return most
}

// Projected returns how busy the shared CPUs would be, at the busiest load
// step, with only sides loaded at once: what else ran there, and what each
// of those sides would use at its target rate.
func (l SidesLoad) Projected(sides ...string) float64 {
	most := 0.0
	for _, s := range l.Steps {
		p := s.OtherPct
		for _, side := range sides {
			p += 100 * s.Cores[side] / float64(max(l.CPUs, 1))
		}
		most = max(most, p)
	}
	return most
}

// Lighter returns the schedule the sides' load leaves room for where a
// round loaded every variant at once (together) or in pairs (duet) and
// kept the shared CPUs saturated (above SaturatedBusy), at least half of
// it the sides' own work: "duet", when the
// baseline beside its heaviest variant would keep them within FitBusy,
// or else "sequential", one variant at a time. It returns "" when the
// round did not saturate them, for a closed model's users (who send as
// fast as the sides answer: what they take of the CPUs is the load's own
// outcome, and the report warns when it saturates them), or when mode is
// neither.
func (l SidesLoad) Lighter(mode, baseline string) string {
	if mode != "together" && mode != "duet" || slices.ContainsFunc(l.Steps, func(s StepLoad) bool { return s.Closed }) {
		return ""
	}
	// Saturated by the sides themselves: a CPU kept busy by other work
	// (another program, a test suite beside the run) is no less busy with
	// fewer sides on it.
	saturated := false
	for _, s := range l.Steps {
		saturated = saturated || s.BusyPct > SaturatedBusy && s.OtherPct <= s.BusyPct/2
	}
	if !saturated {
		return ""
	}
	if mode == "duet" {
		return "sequential"
	}
	variants := map[string]bool{}
	for _, s := range l.Steps {
		for v := range s.Cores {
			variants[v] = v != baseline
		}
	}
	pairs := 0.0
	for v, other := range variants {
		if other {
			pairs = max(pairs, l.Projected(baseline, v))
		}
	}
	if pairs > 0 && pairs <= FitBusy {
		return "duet"
	}
	return "sequential"
}
