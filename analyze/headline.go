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
}

// headlineChanges are the costs a headline gives as changes, in order. Of
// memory, RSS is given when the run has it, else the cgroup's memory;
// throughput and errors only when they changed (a variant that drops
// requests or fails them says so first).
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
			for _, hc := range changes {
				c, ok := costResult(v.Costs, hc.cost)
				if !ok || c.Delta == nil || (hc.onlyResolved && !c.Delta.Significant) || (hc.cost == Memory && haveRSS) {
					continue
				}
				haveRSS = haveRSS || hc.cost == RSS
				info := Info(hc.cost)
				h.Changes = append(h.Changes, HeadlineCost{Cost: hc.cost, Label: info.Label, Unit: info.Unit,
					Digits: info.Digits, Value: c.Value, Delta: c.Delta})
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
