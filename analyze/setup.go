package analyze

import (
	"cmp"
	"maps"
	"slices"

	"github.com/tollperf/toll/record"
)

// setupWarnings warns, for each measured service and each choice its
// runtime made as it began (record.RuntimeSample.Setup: a JVM's garbage
// collector), when the run's trials did not all find the same: two starts
// that chose differently compare the choices as well as the variants. A
// JVM picks its collector by the CPUs and memory it sees as it begins,
// unless its command names one, so a start begun on another number of
// CPUs than the rest, or a variant whose options name a collector, runs
// another collector: its CPU, memory and GC figures then differ by more
// than what the variant changed.
//
// Each warning's Args: the service, the choice's name ("gc"), then for
// each value in order its value, the variants that ran it ([]string) and
// for each of those its start (from 1; 0 in a run of one start, or whose
// services started afresh for every trial).
func setupWarnings(trials []*record.Trial) []Warning {
	type at struct {
		service, key string
	}
	type holder struct {
		variant string
		start   int
	}
	several := slices.ContainsFunc(trials, func(t *record.Trial) bool { return t.Launch > 0 })
	seen := map[at]map[string]map[holder]bool{}
	for _, t := range trials {
		measured := map[string]bool{}
		for _, s := range t.Services {
			measured[s.Name] = s.Measured
		}
		for _, ss := range t.Samples {
			if !measured[ss.Service] {
				continue
			}
			for k, v := range firstSetup(ss.Points) {
				a := at{ss.Service, k}
				if seen[a] == nil {
					seen[a] = map[string]map[holder]bool{}
				}
				if seen[a][v] == nil {
					seen[a][v] = map[holder]bool{}
				}
				start := 0
				if several {
					start = t.Launch + 1
				}
				seen[a][v][holder{t.Variant, start}] = true
			}
		}
	}
	var out []Warning
	keys := slices.SortedFunc(maps.Keys(seen), func(a, b at) int {
		return cmp.Or(cmp.Compare(a.service, b.service), cmp.Compare(a.key, b.key))
	})
	for _, a := range keys {
		byValue := seen[a]
		if len(byValue) < 2 {
			continue
		}
		args := Args{a.service, a.key}
		for _, v := range slices.Sorted(maps.Keys(byValue)) {
			hs := slices.SortedFunc(maps.Keys(byValue[v]), func(x, y holder) int {
				return cmp.Or(cmp.Compare(x.variant, y.variant), cmp.Compare(x.start, y.start))
			})
			variants, starts := make([]string, len(hs)), make([]int, len(hs))
			for i, h := range hs {
				variants[i], starts[i] = h.variant, h.start
			}
			args = append(args, v, variants, starts)
		}
		out = append(out, warn(WarnSetupsDiffer, args...))
	}
	return out
}

// firstSetup returns the setup of the first runtime reading among points
// that has one, or nil.
func firstSetup(points []record.Sample) map[string]string {
	for _, p := range points {
		for _, r := range p.Runtimes {
			if len(r.Setup) > 0 {
				return r.Setup
			}
		}
	}
	return nil
}
