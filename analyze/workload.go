package analyze

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tollperf/toll/record"
)

// Costs of a job experiment (one run of a fixed amount of work).
const (
	JobWall        Cost = "job_wall_s"
	JobWallPerWork Cost = "job_wall_s_per_work"
	JobCPU         Cost = "job_cpu_s"
	JobUser        Cost = "job_user_s"
	JobSystem      Cost = "job_system_s"
	JobPeakMemory  Cost = "job_peak_memory_mib"
	JobMaxRSS      Cost = "job_max_rss_mib"
	JobSpans       Cost = "job_spans"
	JobSpansPerOp  Cost = "job_spans_per_work"
)

// Costs of a start-up experiment (one cold start of a variant's services).
const (
	StartupPortOpen Cost = "startup_port_open_s"
	StartupReady    Cost = "startup_ready_s"
	StartupJVM      Cost = "startup_jvm_s"
	StartupApp      Cost = "startup_app_s"
	StartupCPU      Cost = "startup_cpu_s"
	StartupRSS      Cost = "startup_rss_mib"
	StartupClasses  Cost = "startup_jvm_classes"
)

// TimeToPeak is the seconds from a closed-model trial's first request
// until its throughput first reaches 95% of its window's plateau, for
// services started for that trial (Sermant's "time to reach max TPS").
const TimeToPeak Cost = "time_to_peak_s"

// FlagFailed marks a job that did not succeed (exit status, signal,
// timeout) or a start in which a service did not become ready. Args:
// whether a job (else a start) failed, its error.
const FlagFailed = "failed"

// logCostPrefix starts the name of a figure read from a log (log_metrics).
const logCostPrefix = "log_"

// LogCost is the cost of the figure name read from a log.
func LogCost(name string) Cost { return Cost(logCostPrefix + name) }

// workloadCosts describes the costs of start-up and job experiments, in
// report order.
func workloadCosts() []CostInfo {
	return []CostInfo{
		{StartupReady, "start-up: launch → ready", "s", 3, false},
		{StartupPortOpen, "start-up: launch → port open", "s", 3, false},
		{StartupJVM, "start-up: JVM (launch → VM created)", "s", 3, false},
		{StartupApp, "start-up: application (VM created → ready)", "s", 3, false},
		{StartupCPU, "start-up: CPU until ready", "s", 3, false},
		{StartupRSS, "start-up: RSS at ready", "MiB", 1, false},
		{StartupClasses, "start-up: JVM classes loaded at ready", "", 0, false},
		{JobWall, "job: wall time", "s", 3, false},
		{JobWallPerWork, "job: wall time per unit of work", "s", 3, false},
		{JobCPU, "job: CPU (user + system)", "s", 3, false},
		{JobUser, "job: CPU user", "s", 3, false},
		{JobSystem, "job: CPU system", "s", 3, false},
		{JobPeakMemory, "job: peak memory (cgroup)", "MiB", 1, false},
		{JobMaxRSS, "job: largest process RSS", "MiB", 1, false},
		{JobSpans, "job: spans received", "", 0, true},
		{JobSpansPerOp, "job: spans per unit of work", "", 3, true},
		{TimeToPeak, "time to 95% of peak throughput", "s", 2, false},
	}
}

// logCostInfo describes a figure read from a log: its unit is the suffix
// of its name after the last '_' ("app_start_s": s).
func logCostInfo(c Cost) (CostInfo, bool) {
	name, ok := strings.CutPrefix(string(c), logCostPrefix)
	if !ok {
		return CostInfo{}, false
	}
	unit := ""
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		unit = name[i+1:]
	}
	return CostInfo{Cost: c, Label: "log: " + name, Unit: unit, Digits: 3}, true
}

// failed says whether a start-up or job trial failed (its figures are not
// a measurement of the planned work), and with which error.
func failed(t *record.Trial) (bool, string) {
	switch {
	case t.Job != nil && t.Job.Failed:
		return true, t.Job.Error
	case t.Startup != nil && t.Startup.Failed:
		return true, t.Startup.Error
	}
	return false, ""
}

// summarizeWorkload computes the costs of a start-up or job trial; ok is
// false for a load test's trial.
func summarizeWorkload(t *record.Trial) (*TrialCosts, bool) {
	if t.Job == nil && t.Startup == nil {
		return nil, false
	}
	tc := &TrialCosts{Index: t.Index, Round: t.Round, Step: t.Step, Variant: t.Variant,
		Costs: map[Cost]float64{}, Services: map[string]map[Cost]float64{}}
	add := func(code string, args ...any) {
		tc.Flags = append(tc.Flags, Flag{Trial: t.Index, Variant: t.Variant, Round: t.Round, Code: code, Args: args})
	}
	if t.Interrupted {
		add(FlagInterrupted, t.Error)
	}
	if bad, why := failed(t); bad {
		add(FlagFailed, t.Job != nil, why)
	}
	if j := t.Job; j != nil {
		jobCosts(j, tc.Costs)
		if n := len(t.Telemetry); n >= 2 && t.Telemetry[n-1].Spans >= t.Telemetry[0].Spans {
			spans := float64(t.Telemetry[n-1].Spans - t.Telemetry[0].Spans)
			tc.Costs[JobSpans] = spans
			if j.Work > 0 {
				tc.Costs[JobSpansPerOp] = spans / j.Work
			}
		}
	} else {
		startupCosts(t.Startup, tc)
	}
	return tc, true
}

func jobCosts(j *record.JobRun, c map[Cost]float64) {
	c[JobWall] = j.WallS
	if j.Work > 0 {
		c[JobWallPerWork] = j.WallS * j.Per / j.Work
	}
	c[JobCPU], c[JobUser], c[JobSystem] = j.UserS+j.SystemS, j.UserS, j.SystemS
	if j.PeakMemoryBytes > 0 {
		c[JobPeakMemory] = float64(j.PeakMemoryBytes) / (1 << 20)
	}
	if j.MaxRSSBytes > 0 {
		c[JobMaxRSS] = float64(j.MaxRSSBytes) / (1 << 20)
	}
	for n, v := range j.LogMetrics {
		c[LogCost(n)] = v
	}
}

// startupCosts sums a start over the measured services: the variant is
// ready when its last measured service is, its CPU and memory are their
// sums, and the JVM's and the log's figures are those of the first
// measured service that has them. Each measured service also gets costs of
// its own.
func startupCosts(st *record.StartupRun, tc *TrialCosts) {
	c := tc.Costs
	measured := 0
	for _, s := range st.Services {
		if s.Measured {
			measured++
		}
	}
	for _, s := range st.Services {
		if !s.Measured {
			continue
		}
		own := map[Cost]float64{StartupReady: s.ReadyS, StartupCPU: s.CPUS, StartupRSS: float64(s.RSSBytes) / (1 << 20)}
		if s.PortOpenS > 0 {
			own[StartupPortOpen] = s.PortOpenS
		}
		if j := s.JVM; j != nil && j.CreatedS > 0 {
			own[StartupJVM] = j.CreatedS
			own[StartupApp] = s.ReadyS - j.CreatedS
			own[StartupClasses] = float64(j.Classes)
		}
		for n, v := range s.LogMetrics {
			own[LogCost(n)] = v
		}
		if measured > 1 {
			tc.Services[s.Name] = own
		}
		for k, v := range own {
			switch k {
			case StartupReady, StartupPortOpen:
				c[k] = math.Max(c[k], v)
			case StartupCPU, StartupRSS:
				c[k] += v
			default:
				if _, ok := c[k]; !ok {
					c[k] = v
				}
			}
		}
	}
}

// timeToPeak returns the seconds from a trial's first request until its
// throughput first reached 95% of the plateau of its measured window (the
// median of the window's per-second completions), and whether there is
// one: a closed-model trial whose services started for it.
func timeToPeak(t *record.Trial, w Window) (float64, bool) {
	fresh := false
	for _, s := range t.Services {
		fresh = fresh || (s.Measured && s.Started)
	}
	if t.TargetUsers == 0 || !fresh || len(t.Intervals) == 0 {
		return 0, false
	}
	var window []float64
	for _, iv := range t.Intervals {
		if w.holdsInterval(iv.T) {
			window = append(window, float64(iv.Completed))
		}
	}
	if len(window) == 0 {
		return 0, false
	}
	plateau := median(window)
	if plateau <= 0 {
		return 0, false
	}
	first := t.Intervals[0].T
	for _, iv := range t.Intervals {
		if float64(iv.Completed) >= 0.95*plateau {
			return iv.T + 1 - first, true
		}
	}
	return 0, false
}

// Ratio is hyperfine's headline: the variant's mean of a cost as a
// multiple of the baseline's ("1.07 ± 0.02 × baseline wall time"), from
// the paired log-ratio interval.
type Ratio struct {
	Cost  Cost   `json:"cost"`
	Label string `json:"label"`
	// Times is the geometric mean of the per-repetition ratios;
	// PlusMinus half the width of its 95% interval (absent with one pair).
	Times     float64  `json:"times"`
	PlusMinus *float64 `json:"plus_minus,omitempty"`
	// Low and High bound the 95% interval, as ratios: not symmetric about
	// Times, since it is a ratio's (absent with one pair).
	Low  *float64 `json:"low,omitempty"`
	High *float64 `json:"high,omitempty"`
	// Significant is set when the interval excludes 1.
	Significant bool `json:"significant"`
}

// String renders the ratio as hyperfine does: "1.07 ± 0.02 × baseline wall time".
func (r Ratio) String() string {
	s := strconv.FormatFloat(r.Times, 'f', 2, 64)
	if r.PlusMinus != nil {
		s += " ± " + strconv.FormatFloat(*r.PlusMinus, 'f', 2, 64)
	}
	return s + " × baseline " + r.Label
}

// headline is the cost whose ratio heads a start-up or job experiment's
// report, and its name in the headline.
func headline(workload string) (Cost, string) {
	switch workload {
	case "job":
		return JobWall, "wall time"
	case "startup":
		return StartupReady, "time to ready"
	}
	return "", ""
}

// ratioOf turns a log-ratio comparison into a Ratio.
func ratioOf(c Cost, label string, d *Delta) *Ratio {
	if d == nil || d.Pct == nil || d.Method != "log-ratio" {
		return nil
	}
	r := &Ratio{Cost: c, Label: label, Times: 1 + *d.Pct/100, Significant: d.Significant}
	if d.CILow != nil && d.CIHigh != nil {
		pm := (*d.CIHigh - *d.CILow) / 200
		lo, hi := 1+*d.CILow/100, 1+*d.CIHigh/100
		r.PlusMinus, r.Low, r.High = &pm, &lo, &hi
	}
	return r
}

// workLabel names the wall time per unit of work of a run's jobs ("wall
// time per 1000000 messages"), or "" when its jobs count no work.
func workLabel(trials []*record.Trial) string {
	for _, t := range trials {
		if j := t.Job; j != nil && j.Work > 0 {
			return strings.TrimSpace(fmt.Sprintf("job: wall time per %s %s", strconv.FormatFloat(j.Per, 'f', -1, 64), j.Unit))
		}
	}
	return ""
}

// median returns the median of xs (which it sorts), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
