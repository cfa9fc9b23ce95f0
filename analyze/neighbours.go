package analyze

import (
	"maps"
	"slices"

	"github.com/tollperf/toll/record"
)

// NeighbourShareLimit is the difference, as a share of the baseline's own
// CPU, between what the idle neighbours used during the baseline's windows
// and during a variant's above which the report warns: background work of
// that size (an idle variant's exporter flushing, its garbage collector, its
// JIT) falls on one side of the comparison more than on the other.
const NeighbourShareLimit = 0.05

// neighbourCores returns the CPU, in cores, that the idle services of other
// variants used while trial t's load ran, and whether any ran.
func neighbourCores(t *record.Trial) (float64, bool) {
	var sum float64
	for _, n := range t.Neighbours {
		if n.S <= 0 {
			return 0, false
		}
		sum += n.CPUS / n.S
	}
	return sum, len(t.Neighbours) > 0
}

// idleNeighbourBusy returns the busy share (percent) of each CPU that
// trial t's neighbours at idle priority took (starts warmed ahead of their
// turn beside it, record.NeighbourCPU.IdleCPUs), each spread evenly over
// its CPUs. The kernel ran them only where the trial's services and load
// generator left a CPU idle, so what they took says nothing of whether
// those were held back: the checks for a saturated CPU leave it out.
func idleNeighbourBusy(t *record.Trial) map[int]float64 {
	var out map[int]float64
	for _, n := range t.Neighbours {
		cpus := parseCPUList(n.IdleCPUs)
		if len(cpus) == 0 || n.S <= 0 {
			continue
		}
		if out == nil {
			out = map[int]float64{}
		}
		for _, c := range cpus {
			out[c] += 100 * n.CPUS / n.S / float64(len(cpus))
		}
	}
	return out
}

// meanNeighbours returns the mean neighbour CPU, in cores, over rounds, the
// neighbours' names, and whether any round had neighbours.
func meanNeighbours(rounds map[int]*TrialCosts) (float64, []string, bool) {
	var sum float64
	var n int
	names := map[string]bool{}
	for _, r := range slices.Sorted(maps.Keys(rounds)) { // in order: the sum is the same to the last digit
		tc := rounds[r]
		if tc.NeighbourCores == nil {
			continue
		}
		sum += *tc.NeighbourCores
		n++
		for _, name := range tc.neighbours {
			names[name] = true
		}
	}
	if n == 0 {
		return 0, nil, false
	}
	return sum / float64(n), slices.Sorted(maps.Keys(names)), true
}

// neighbourWarning says when the idle neighbours of the baseline's windows
// and of variant v's used the machine unevenly (by more than
// NeighbourShareLimit of the baseline's own CPU): the schedule then lets
// one side's background work into the comparison. baseCores is the
// baseline's own CPU in cores.
func neighbourWarning(baseline, v, step string, base, rounds map[int]*TrialCosts, baseCores float64) (Warning, bool) {
	nb, nbNames, okB := meanNeighbours(base)
	nv, nvNames, okV := meanNeighbours(rounds)
	if !okB || !okV || baseCores <= 0 {
		return Warning{}, false
	}
	if d := nb - nv; d < NeighbourShareLimit*baseCores && -d < NeighbourShareLimit*baseCores {
		return Warning{}, false
	}
	return warn(WarnNeighboursUneven, v, step, baseline, nbNames, nb, 100*nb/baseCores, nvNames, nv), true
}
