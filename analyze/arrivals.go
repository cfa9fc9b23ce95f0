package analyze

import (
	"fmt"
	"strconv"
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
	// Note is the sentence the reports print.
	Note string `json:"note"`
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
	for _, tc := range costs {
		for _, f := range tc.Flags {
			if f.Code == FlagLateArrival {
				a.LateTrials++
			}
		}
	}
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
	if a.LateTrials > 0 {
		a.Note += fmt.Sprintf(" (%d trial(s) above %d µs: flagged %s)", a.LateTrials, LateArrivalLimit.Microseconds(), FlagLateArrival)
	}
	a.Note += "."
	return a
}
