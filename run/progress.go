package run

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// position writes trial n's number for the progress lines, as its flags
// and files name it: "[4/8]" of the trials planned, or "[4]" in precision
// mode, whose plan holds a ceiling of rounds that the stopping rule ends
// long before.
func (r *runner) position(n int) string {
	if r.s.Precision.On {
		return fmt.Sprintf("[%d]", n)
	}
	return fmt.Sprintf("[%d/%d]", n, r.planned)
}

// finished counts a written trial and prints one line about it.
func (r *runner) finished(tr *record.Trial, res *load.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	// The trial's own number, as its flags and files name it: in a duet,
	// or a resumed run, trials do not finish in the order they are numbered.
	line := fmt.Sprintf("%s round %d %-10s %10s", r.position(tr.Index), tr.Round, tr.Variant, trialStep(tr))
	if tr.Window() > 0 {
		if !tr.Idle {
			// Over the analysis window, as the report and the rate-missed
			// flag read it.
			rate, _ := tr.Achieved(r.s.Trim.Start.D().Seconds(), tr.Window().Seconds()-r.s.Trim.End.D().Seconds())
			line += fmt.Sprintf("  achieved %7.1f req/s", rate)
			if res != nil && res.Latency != nil && res.Latency.TotalCount() > 0 {
				line += fmt.Sprintf("  p99 %7.2f ms", float64(res.Latency.ValueAtQuantile(99))/1000)
			}
		}
		// Over the analysis window too: the samples reach before the
		// load starts and after it ends (a cluster's probe is read with a
		// margin either side), when the services idle.
		from, to := r.s.Trim.Start.D().Seconds(), tr.Window().Seconds()-r.s.Trim.End.D().Seconds()
		var cpu float64
		for _, ser := range tr.Samples {
			if isMeasured(tr, ser.Service) && to > from {
				cpu += cpuRise(ser.Points, from, to) / (to - from)
			}
		}
		line += fmt.Sprintf("  CPU %.3f cores", cpu/tr.Share())
		if n := tr.Load.Errors.Total(); n > 0 {
			line += fmt.Sprintf("  errors %d", n)
			if x := tr.Load.ErrorExamples.First(); x != "" {
				line += " (" + x + ")"
			}
		}
	}
	if tr.Interrupted {
		line += "  (interrupted: " + tr.Error + ")"
	}
	if r.opt.Live {
		line = "\r\033[K" + line // over the status line
	}
	fmt.Fprintln(r.opt.Progress, line)
}

// liveFigures returns what the status line shows of second sec of a
// trial's window whose load ran for share of it (a sliced duet's side:
// 0.5; 0 or 1: throughout), with the services using cpu cores: the
// seconds of its own load so far, and its rate and CPU while loaded, as
// the line of a finished trial gives them, to compare with the scenario's
// duration and rate (a side's window lasts twice its duration, loaded
// half the time).
func liveFigures(sec load.Second, share, cpu float64) (loadedS, rate, cores float64) {
	if share <= 0 || share > 1 {
		share = 1
	}
	return float64(sec.Index+1) * share, float64(sec.Completed) / share, cpu / share
}

// status redraws the live status line during a trial whose load runs for
// share of its window, its measured services using cpu cores.
func (r *runner) status(pt *plan.Trial, sec load.Second, cpu, share float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	loaded, rate, cores := liveFigures(sec, share, cpu)
	line := fmt.Sprintf("%s round %d %s at %s: %ss/%ds  %.0f req/s  p99 %.2f ms  CPU %.3f cores",
		r.position(pt.Index), pt.Round, pt.Variant, scenario.Step{Rate: pt.Rate, Users: pt.Users, Idle: pt.Idle, CPULimit: pt.CPULimit},
		strconv.FormatFloat(loaded, 'f', -1, 64), int(r.s.Load.Duration.D().Seconds()),
		rate, float64(sec.P99.Microseconds())/1000, cores)
	if sec.Errors > 0 {
		line += fmt.Sprintf("  errors %d", sec.Errors)
	}
	switch {
	case r.s.Precision.On:
		// The stopping rule, not the plan's ceiling of rounds, ends the run.
		left := max(r.s.Precision.Budget.D()-time.Since(r.began), 0)
		line += fmt.Sprintf("  budget left %s", left.Round(time.Second))
	case r.done > 0:
		per := time.Since(r.began) / time.Duration(r.done)
		line += fmt.Sprintf("  ETA %s", (per * time.Duration(r.total-r.done)).Round(time.Second))
	}
	fmt.Fprint(r.opt.Progress, "\r\033[K"+line)
}

// trialStep describes the step a load test's trial ran at.
func trialStep(tr *record.Trial) scenario.Step {
	return scenario.Step{Rate: tr.TargetRate, Users: tr.TargetUsers, Idle: tr.Idle, CPULimit: tr.CPULimit}
}

// cpuRise returns how many CPU-seconds the cumulative samples pts grew by
// between from and to (seconds from the window's start), interpolated
// linearly at both edges and clamped to the first and last sample, as the
// analysis reads a counter over its window.
func cpuRise(pts []record.Sample, from, to float64) float64 {
	at := func(x float64) float64 {
		if len(pts) == 0 {
			return 0
		}
		if x <= pts[0].T {
			return pts[0].CPU
		}
		for i := 1; i < len(pts); i++ {
			if x <= pts[i].T {
				f := (x - pts[i-1].T) / (pts[i].T - pts[i-1].T)
				return pts[i-1].CPU + f*(pts[i].CPU-pts[i-1].CPU)
			}
		}
		return pts[len(pts)-1].CPU
	}
	return at(to) - at(from)
}

func isMeasured(tr *record.Trial, name string) bool {
	for _, s := range tr.Services {
		if s.Name == name {
			return s.Measured
		}
	}
	return false
}

// beginProgress notes when the first trial began, for the ETA.
func (r *runner) beginProgress() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.began.IsZero() {
		r.began = time.Now()
	}
}

// finishedOther counts a written start-up or job trial and prints one line
// about it.
func (r *runner) finishedOther(tr *record.Trial, figures string, failed bool, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	line := fmt.Sprintf("%s repetition %d %-10s", r.position(tr.Index), tr.Round, tr.Variant)
	if tr.Startup != nil && tr.Startup.CPULimit > 0 {
		line += fmt.Sprintf(" %5s", scenario.Step{CPULimit: tr.Startup.CPULimit})
	}
	line += "  " + figures
	if failed {
		line += "  FAILED: " + oneLine(why)
	}
	if tr.Interrupted {
		line += "  (interrupted)"
	}
	fmt.Fprintln(r.opt.Progress, line)
}

// oneLine returns the first line of msg.
func oneLine(msg string) string {
	first, _, _ := strings.Cut(msg, "\n")
	return first
}
