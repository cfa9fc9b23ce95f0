package analyze

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tollperf/toll/record"
)

// Arrivals says how an open-model run's requests arrived: the arrival
// process, the release grid if the scenario set one (latency then holds the
// queueing of each step's burst), and how late the load generator sent
// them, so that a reader knows what the latency rows measured.
type Arrivals struct {
	// Process is "uniform" or "poisson".
	Process string `json:"process"`
	// GridS is the release grid's step in seconds (load.quantum); 0 when
	// each request left at its own time.
	GridS float64 `json:"grid_s,omitempty"`
	// LatenessP99US is the highest per-trial p99 of the generator's send
	// lateness (µs) over the trials analysed; LateTrials counts the trials
	// flagged late-arrivals.
	LatenessP99US int64 `json:"lateness_p99_us"`
	LateTrials    int   `json:"late_trials,omitempty"`
	// LateHeldBy names the processes and kernel threads that ran on the
	// load CPUs during the loads of the trials flagged late-arrivals, most
	// often and longest first (record.Load.LoadCPUsHeldBy).
	LateHeldBy []LateHolder `json:"late_held_by,omitempty"`
	// Note is the sentence the reports print: analyze leaves it empty,
	// report fills it in when it writes summary.json, and a summary read
	// back keeps it.
	Note string `json:"note"`
}

// LateHolder is a process, or a kernel thread, that ran on the load CPUs
// during the loads of trials flagged late-arrivals.
type LateHolder struct {
	Name   string `json:"name"`
	Kernel bool   `json:"kernel,omitempty"`
	// Trials counts the late trials it ran in; MedianMS is its CPU time on
	// the load CPUs in the median of them.
	Trials   int     `json:"trials"`
	MedianMS float64 `json:"median_ms"`
}

// arrivalsOf describes the arrivals of an open-model run's trials; nil for
// any other workload.
func arrivalsOf(m *record.Manifest, trials []*record.Trial, costs []*TrialCosts) *Arrivals {
	if m.Load.Model != "open" {
		return nil
	}
	a := &Arrivals{Process: m.Load.Arrival, GridS: m.Load.QuantumS}
	if a.Process == "" {
		a.Process = "uniform" // a run recorded before load.arrival
	}
	for _, t := range trials {
		a.LatenessP99US = max(a.LatenessP99US, t.Load.LatenessP99US)
	}
	late := map[int]bool{}
	for _, tc := range costs {
		for _, f := range tc.Flags {
			if f.Code == FlagLateArrival {
				a.LateTrials++
				late[f.Trial] = true
			}
		}
	}
	a.LateHeldBy = lateHolders(trials, late)
	return a
}

// lateHolders sums up, over the trials whose index is in late, which
// processes and kernel threads ran on the load CPUs during their loads:
// those in most trials first, then the longest.
func lateHolders(trials []*record.Trial, late map[int]bool) []LateHolder {
	type key struct {
		name   string
		kernel bool
	}
	ms := map[key][]float64{}
	for _, t := range trials {
		if !late[t.Index] {
			continue
		}
		per := map[key]float64{}
		for _, h := range t.Load.LoadCPUsHeldBy {
			per[key{h.Name, h.Kernel}] += h.MS
		}
		for k, v := range per {
			ms[k] = append(ms[k], v)
		}
	}
	var out []LateHolder
	for k, vs := range ms {
		slices.Sort(vs)
		out = append(out, LateHolder{Name: k.name, Kernel: k.kernel, Trials: len(vs), MedianMS: quantile(vs, 0.5)})
	}
	slices.SortFunc(out, func(x, y LateHolder) int {
		return cmp.Or(cmp.Compare(y.Trials, x.Trials), cmp.Compare(y.MedianMS, x.MedianMS), strings.Compare(x.Name, y.Name))
	})
	return out
}
