package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tollperf/toll/analyze"
)

// ArrivalsNote returns in English how an open-model run's requests
// arrived, so that a reader knows what the latency rows measured; or the
// note a summary read back holds.
func ArrivalsNote(a *analyze.Arrivals) string {
	if a.Note != "" {
		return a.Note
	}
	var b strings.Builder
	how := "each request sent at its own time"
	if a.GridS > 0 {
		grid := time.Duration(a.GridS * float64(time.Second)).String()
		how = "released on a grid of " + grid
		fmt.Fprintf(&b, "Latency was measured with a release grid of %s (load.quantum): the requests due in each %s step were sent together, "+
			"so the service's queueing of each burst is in the latency; leave quantum out to send each request at its own time. ", grid, grid)
	}
	fmt.Fprintf(&b, "Arrivals: %s, %s; ", a.Process, how)
	if a.LatenessP99US == 0 {
		// A trial that sent anything records at least 1 µs: none did, or
		// the run is from before toll measured its lateness.
		b.WriteString("the load generator's send lateness was not recorded")
	} else {
		fmt.Fprintf(&b, "the load generator's send lateness was at most %s µs at p99 in any trial", strconv.FormatInt(a.LatenessP99US, 10))
	}
	b.WriteString(".")
	if a.LateTrials > 0 {
		fmt.Fprintf(&b, " %d trial(s) above %d µs are flagged %s: that delay is in their latency, and their CPU costs stand. "+
			"A busy load CPU or a shared machine holds the generator up, and a service that stalls long enough to hold every connection (load.max_conns) makes requests wait for one.",
			a.LateTrials, analyze.LateArrivalLimit.Microseconds(), analyze.FlagLateArrival)
		if len(a.LateHeldBy) > 0 {
			var parts []string
			for _, h := range a.LateHeldBy[:min(len(a.LateHeldBy), 3)] {
				kernel := ""
				if h.Kernel {
					kernel = ", a kernel thread"
				}
				parts = append(parts, fmt.Sprintf("%s (%s%s; %.0f ms in the median one)", h.Name, trialCount(h.Trials, a.LateTrials), kernel, h.MedianMS))
			}
			b.WriteString(" On the load CPUs ran, during those trials' loads: " + strings.Join(parts, ", ") +
				". A kernel thread that runs for milliseconds at a time there holds the generator back by as much (docs/method.md, \"Arrivals: when requests leave\").")
		}
	}
	return b.String()
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
