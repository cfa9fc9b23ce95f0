package analyze

// Headline is the answer for one variant at one load step, in the few
// costs a reader looks for first: what it costs in CPU per request and in
// tail latency, in memory, and what telemetry it sends. A report writes it
// as a sentence ("otel: +50% CPU per request [+31%, +72%], +0.9 ms p99;
// 4.0 spans per request").
type Headline struct {
	Step    int    `json:"step"`
	Variant string `json:"variant"`
	// Changes are the headline costs' differences from the baseline, in
	// headlineCosts' order; Values the costs given as the variant's own
	// value (what it exports, where the baseline exports nothing).
	Changes []HeadlineCost `json:"changes"`
	Values  []HeadlineCost `json:"values,omitempty"`
}

// HeadlineCost is one cost of a headline: the variant's value and, for a
// change, its difference from the baseline.
type HeadlineCost struct {
	Cost   Cost    `json:"cost"`
	Label  string  `json:"label"`
	Unit   string  `json:"unit"`
	Digits int     `json:"digits"`
	Value  float64 `json:"value"`
	Delta  *Delta  `json:"delta,omitempty"`
	// TooWide is set when the change's interval is too wide to tell
	// anything (tooWide): a headline says so rather than quote it.
	TooWide bool `json:"too_wide,omitempty"`
	// ByChance is set when the change's own 95% interval excludes no
	// change but the change does not survive the correction for the
	// number of costs tested (Delta.SignificantCorrected): a headline
	// does not name it as a change. The primary cost keeps its own
	// verdict, so it is never by chance.
	ByChance bool `json:"by_chance,omitempty"`
}

// byChance says whether d reads a change on its own that the correction
// for the number of costs tested removes.
func byChance(d *Delta) bool {
	return d != nil && d.Significant && !d.SignificantCorrected
}

// WidestRatio is the ratio of an interval's upper to its lower bound, as
// factors of the baseline, beyond which a headline calls it too wide to
// tell: [-50%, +100%] is as wide as one may be, and two rounds of a
// latency tail ([-100%, +1058331%]) are far beyond it.
const WidestRatio = 4.0

// tooWide says whether d's interval is too wide for a headline: its
// bounds, as factors of the baseline (1 + Δ%), more than WidestRatio
// apart, or a difference's interval wider than WidestRatio − 1 times the
// baseline's value base.
func tooWide(d *Delta, base float64) bool {
	if d == nil || d.CILow == nil || d.CIHigh == nil {
		return false
	}
	if d.Pct != nil {
		lo, hi := 1+*d.CILow/100, 1+*d.CIHigh/100
		return lo <= 0 || hi/lo > WidestRatio
	}
	return base > 0 && (*d.CIHigh-*d.CILow)/base > WidestRatio-1
}

// headlineChanges are the costs a headline gives as changes, in order. Of
// memory, RSS is given when the run has it, else the cgroup's memory;
// throughput and errors only when they changed once corrected for the
// number of costs tested (a variant that drops requests or fails them
// says so first).
var headlineChanges = []struct {
	cost         Cost
	onlyResolved bool
}{
	{Throughput, true}, {ErrorRate, true},
	{CPUPerRequest, false}, {CPUNoJIT, false}, {LatencyP99, false}, {RSS, false}, {Memory, false},
}

// idleHeadlineChanges are the costs an idle step's headline gives as
// changes: its static cost, with no request to count per (Sermant's tables
// of memory, classes and threads at rest).
var idleHeadlineChanges = []struct {
	cost         Cost
	onlyResolved bool
}{
	{CPUCores, false}, {RSS, false}, {Memory, false}, {Threads, false}, {Classes, false},
}

// workloadHeadlineChanges are the costs a start-up or job experiment's
// headline gives as changes: its time, its CPU and its memory.
var workloadHeadlineChanges = map[string][]struct {
	cost         Cost
	onlyResolved bool
}{
	"startup": {{StartupReady, false}, {StartupCPU, false}, {StartupRSS, false}},
	"job":     {{JobWall, false}, {JobCPU, false}, {JobPeakMemory, false}},
}

// headlineValues are the costs a headline gives as the variant's value.
var headlineValues = []Cost{SpansPerReq, ExportBytes}

// headlines picks every non-baseline variant's headline costs at each step.
func headlines(s *Summary) []Headline {
	var out []Headline
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			if v.Name == s.Baseline || (s.Manifest != nil && s.Manifest.Control != "" && v.Name == s.Manifest.Control) {
				continue // the A/A control answers no question of its own
			}
			h := Headline{Step: st.Index, Variant: v.Name}
			haveRSS := false
			changes := headlineChanges
			if st.Idle {
				changes = idleHeadlineChanges
			}
			if w, ok := workloadHeadlineChanges[st.Workload]; ok {
				changes = w
			}
			for _, hc := range changes {
				c, ok := costResult(v.Costs, hc.cost)
				// A change the run cannot judge (no verdict by design, or
				// from one start) is no headline.
				if !ok || c.Delta == nil || c.Delta.NoVerdict != "" || (hc.onlyResolved && !c.Delta.SignificantCorrected) || (hc.cost == Memory && haveRSS) {
					continue
				}
				haveRSS = haveRSS || hc.cost == RSS
				info := Info(hc.cost)
				h.Changes = append(h.Changes, HeadlineCost{Cost: hc.cost, Label: info.Label, Unit: info.Unit,
					Digits: info.Digits, Value: c.Value, Delta: c.Delta, TooWide: tooWide(c.Delta, c.Value-c.Delta.Abs),
					ByChance: byChance(c.Delta)})
			}
			for _, cost := range headlineValues {
				c, ok := costResult(v.Costs, cost)
				if !ok || c.Value <= 0 {
					continue
				}
				info := Info(cost)
				h.Values = append(h.Values, HeadlineCost{Cost: cost, Label: info.Label, Unit: info.Unit,
					Digits: info.Digits, Value: c.Value})
			}
			out = append(out, h)
		}
	}
	return out
}

func costResult(cs []CostResult, c Cost) (CostResult, bool) {
	for _, x := range cs {
		if x.Cost == c {
			return x, true
		}
	}
	return CostResult{}, false
}
