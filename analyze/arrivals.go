package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
	// Note is the sentence the reports print.
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
	how := "each request sent at its own time"
	if a.GridS > 0 {
		grid := time.Duration(a.GridS * float64(time.Second)).String()
		how = "released on a grid of " + grid
		a.Note = fmt.Sprintf("Latency was measured with a release grid of %s (load.quantum): the requests due in each %s step were sent together, "+
			"so the service's queueing of each burst is in the latency; leave quantum out to send each request at its own time. ", grid, grid)
	}
	a.Note += fmt.Sprintf("Arrivals: %s, %s; ", a.Process, how)
	if a.LatenessP99US == 0 {
		// A trial that sent anything records at least 1 µs: none did, or
		// the run is from before toll measured its lateness.
		a.Note += "the load generator's send lateness was not recorded"
	} else {
		a.Note += fmt.Sprintf("the load generator's send lateness was at most %s µs at p99 in any trial", strconv.FormatInt(a.LatenessP99US, 10))
	}
	a.Note += "."
	if a.LateTrials > 0 {
		a.Note += fmt.Sprintf(" %d trial(s) above %d µs are flagged %s: that delay is in their latency, and their CPU costs stand. "+
			"A busy load CPU or a shared machine holds the generator up, and a service that stalls long enough to hold every connection (load.max_conns) makes requests wait for one.",
			a.LateTrials, LateArrivalLimit.Microseconds(), FlagLateArrival)
		if len(a.LateHeldBy) > 0 {
			var parts []string
			for _, h := range a.LateHeldBy[:min(len(a.LateHeldBy), 3)] {
				parts = append(parts, fmt.Sprintf("%s (%s%s; %.0f ms in the median one)", h.Name, trialCount(h.Trials, a.LateTrials), kernelThread(h.Kernel), h.MedianMS))
			}
			a.Note += " On the load CPUs ran, during those trials' loads: " + strings.Join(parts, ", ") +
				". A kernel thread that runs for milliseconds at a time there holds the generator back by as much (docs/method.md, \"Arrivals: when requests leave\")."
		}
	}
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

// trialCount says in how many of n trials something was: "in 3 of 5", or
// "in every one".
func trialCount(k, n int) string {
	if k == n {
		if n == 1 {
			return "in it"
		}
		return "in every one"
	}
	return fmt.Sprintf("in %d of %d", k, n)
}
