package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tollperf/toll/record"
)

// SummarySchemaVersion is the version of the Summary JSON (summary.json).
const SummarySchemaVersion = 1

// Summary is the analysed result of a run: what summary.json holds and
// every report is rendered from.
type Summary struct {
	SchemaVersion int              `json:"schema_version"`
	Scenario      string           `json:"scenario"`
	Baseline      string           `json:"baseline"`
	Variants      []string         `json:"variants"`
	Manifest      *record.Manifest `json:"manifest"`
	// ExcludeFlagged is set when flagged trials were left out of the
	// comparisons.
	ExcludeFlagged bool          `json:"exclude_flagged"`
	Steps          []Step        `json:"steps"`
	Trials         []*TrialCosts `json:"trials"`
	Flags          []Flag        `json:"flags,omitempty"`
	Warnings       []string      `json:"warnings,omitempty"`
}

// Step is one load step's results.
type Step struct {
	Index int `json:"index"`
	// Rate is the open model's arrival rate; Users the closed model's
	// number of users (the other is 0).
	Rate     float64         `json:"target_rate"`
	Users    int             `json:"target_users,omitempty"`
	Variants []VariantResult `json:"variants"`
}

// Label names the step: "300 req/s" or "50 users".
func (st Step) Label() string {
	if st.Users > 0 {
		return fmt.Sprintf("%d users", st.Users)
	}
	return strconv.FormatFloat(st.Rate, 'f', -1, 64) + " req/s"
}

// VariantResult is one variant's costs at one load step. Costs are the
// variant's totals over its measured services; Services holds each measured
// service's own costs.
type VariantResult struct {
	Name     string          `json:"name"`
	Rounds   int             `json:"rounds"`
	Costs    []CostResult    `json:"costs"`
	Services []ServiceResult `json:"services,omitempty"`
}

// ServiceResult is one measured service's own costs within a variant: an
// agent daemon or sidecar (role "agent") next to the application.
type ServiceResult struct {
	Name  string       `json:"name"`
	Role  string       `json:"role"`
	Costs []CostResult `json:"costs"`
}

// ServiceCosts are the costs reported for each service on its own.
func ServiceCosts() []Cost {
	return []Cost{CPUPerRequest, CPUCores, RSS, Memory, Threads, JVMHeapUsed, Metaspace, Classes, GCTime}
}

// CostResult is one cost of one variant: its mean over rounds and, for
// variants other than the baseline, its difference from the baseline.
type CostResult struct {
	Cost   Cost      `json:"cost"`
	Label  string    `json:"label"`
	Unit   string    `json:"unit"`
	Value  float64   `json:"value"`
	Values []float64 `json:"values"`
	Delta  *Delta    `json:"delta,omitempty"`
}

// Options control the analysis.
type Options struct {
	Trim Trim
	// ExcludeFlagged leaves flagged trials out of the comparisons.
	ExcludeFlagged bool
}

// Summarize analyses the trials of a run.
func Summarize(m *record.Manifest, trials []*record.Trial, opt Options) (*Summary, error) {
	s := &Summary{SchemaVersion: SummarySchemaVersion, Scenario: m.Scenario, Baseline: m.Baseline,
		Variants: m.Variants, Manifest: m, ExcludeFlagged: opt.ExcludeFlagged}
	type key struct {
		step    int
		variant string
	}
	byKey := map[key]map[int]*TrialCosts{} // round → costs
	steps := map[int]Step{}
	for _, t := range trials {
		tc, err := SummarizeTrial(t, opt.Trim)
		if err != nil {
			s.Warnings = append(s.Warnings, err.Error())
			continue
		}
		s.Trials = append(s.Trials, tc)
		s.Flags = append(s.Flags, tc.Flags...)
		steps[t.Step] = Step{Index: t.Step, Rate: t.TargetRate, Users: t.TargetUsers}
		if opt.ExcludeFlagged && len(tc.Flags) > 0 {
			continue
		}
		put := func(k key) {
			if byKey[k] == nil {
				byKey[k] = map[int]*TrialCosts{}
			}
			byKey[k][t.Round] = tc
		}
		put(key{t.Step, t.Variant})
		if t.Pair != "" {
			// A duet's baseline trial pairs with the variant beside it only.
			put(key{t.Step, pairKey(t.Variant, t.Pair)})
		}
	}
	attributeTelemetry(trials, s.Trials)
	roles := map[string]string{}
	for _, t := range trials {
		for _, sr := range t.Services {
			if sr.Measured {
				roles[sr.Name] = sr.Role
			}
		}
	}
	var stepIdx []int
	for i := range steps {
		stepIdx = append(stepIdx, i)
	}
	sort.Ints(stepIdx)
	for _, si := range stepIdx {
		st := steps[si]
		base := byKey[key{si, m.Baseline}]
		for _, v := range m.Variants {
			rounds := byKey[key{si, v}]
			vr := VariantResult{Name: v, Rounds: len(rounds)}
			var disagree []string
			for _, info := range costsOf(s.Trials) {
				vals := values(rounds, info.Cost)
				if len(vals) == 0 {
					continue
				}
				cr := CostResult{Cost: info.Cost, Label: info.Label, Unit: info.Unit, Value: mean(vals), Values: vals}
				if v != m.Baseline {
					b, x := paired(base, rounds, info.Cost)
					if duet, ok := byKey[key{si, pairKey(m.Baseline, v)}]; ok {
						b, x = paired(duet, rounds, info.Cost)
					}
					d := Compare(info, b, x)
					cr.Delta = &d
					if d.N >= minRoundsForBootstrap && !d.BootstrapAgrees {
						disagree = append(disagree, info.Label)
					}
				}
				vr.Costs = append(vr.Costs, cr)
			}
			if len(disagree) > 0 {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s at %s: the bootstrap and t intervals disagree for %s; treat those verdicts with care (more rounds help)",
					v, st.Label(), strings.Join(disagree, ", ")))
			}
			vr.Services = serviceResults(m.Baseline, v, base, rounds, roles)
			st.Variants = append(st.Variants, vr)
		}
		s.Steps = append(s.Steps, st)
	}
	if len(s.Trials) == 0 {
		return s, fmt.Errorf("no trial to analyse")
	}
	for _, st := range s.Steps {
		for _, vr := range st.Variants {
			if vr.Rounds < minRoundsForBootstrap && vr.Name != m.Baseline {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s has %d complete round(s) at %s: at least 2 are needed for an interval, %d or more for a useful one", vr.Name, vr.Rounds, st.Label(), minRoundsForBootstrap))
			}
		}
	}
	return s, nil
}

// minRoundsForBootstrap is the number of rounds below which an interval is
// too rough for its bootstrap check to say anything; runs that short get
// one warning about their rounds instead.
const minRoundsForBootstrap = 5

// values returns the cost's values over rounds, in round order, skipping
// rounds where the trial has no such cost.
func values(rounds map[int]*TrialCosts, c Cost) []float64 {
	var rs []int
	for r := range rounds {
		rs = append(rs, r)
	}
	sort.Ints(rs)
	var out []float64
	for _, r := range rs {
		if v, ok := rounds[r].Costs[c]; ok {
			out = append(out, v)
		}
	}
	return out
}

// paired returns the values of rounds where both baseline and variant have c.
func paired(base, vari map[int]*TrialCosts, c Cost) (b, v []float64) {
	var rs []int
	for r := range vari {
		rs = append(rs, r)
	}
	sort.Ints(rs)
	for _, r := range rs {
		bt, ok := base[r]
		if !ok {
			continue
		}
		bv, ok1 := bt.Costs[c]
		vv, ok2 := vari[r].Costs[c]
		if ok1 && ok2 {
			b = append(b, bv)
			v = append(v, vv)
		}
	}
	return b, v
}

// attributeTelemetry counts each trial's exported telemetry over its whole
// cycle. An exporter sends in batches, and what it still holds when a
// window closes is flushed later, while the variant is idle (a batch span
// processor's timer) — never inside a window. Each variant has a sink of its
// own, so everything its sink received from the start of one of its trials
// to the start of its next was caused by that trial's requests (warm-up and
// window). Telemetry per request is that count over those requests, and
// telemetry per second is that times the window's achieved rate. A variant's
// last trial, with no next one, keeps the count inside its window.
func attributeTelemetry(trials []*record.Trial, costs []*TrialCosts) {
	byIndex := map[int]*TrialCosts{}
	for _, tc := range costs {
		byIndex[tc.Index] = tc
	}
	last := map[string]*record.Trial{}
	for _, t := range trials { // in run order
		prev := last[t.Variant]
		last[t.Variant] = t
		if prev == nil || len(prev.Telemetry) == 0 || len(t.Telemetry) == 0 {
			continue
		}
		tc := byIndex[prev.Index]
		if tc == nil {
			continue
		}
		warmup := prev.MeasureStart.Sub(prev.Start).Seconds()
		reqs := prev.TargetRate*warmup + float64(prev.Load.Sent)
		if prev.Load.WarmupCompleted > 0 || prev.TargetRate == 0 {
			reqs = float64(prev.Load.WarmupCompleted + prev.Load.Sent)
		}
		if reqs <= 0 {
			continue
		}
		from, to := prev.Telemetry[0], t.Telemetry[0]
		if to.Spans < from.Spans || to.Bytes < from.Bytes || to.Rejected < from.Rejected || to.RejectedBytes < from.RejectedBytes {
			continue // a sink that restarted: keep the window's count
		}
		perReq := float64(to.Spans-from.Spans) / reqs
		tc.Costs[SpansPerReq] = perReq
		tc.Costs[Spans] = perReq * tc.Costs[Throughput]
		tc.Costs[ExportBytes] = float64(acceptedBytes(to)-acceptedBytes(from)) / reqs * tc.Costs[Throughput] / 1024
		tc.Costs[Rejected] = float64(to.Rejected-from.Rejected) / reqs * tc.Costs[Throughput]
		tc.Costs[RejectedBytes] = float64(to.RejectedBytes-from.RejectedBytes) / reqs * tc.Costs[Throughput] / 1024
	}
}

// pairKey names the baseline trials that ran beside variant v in a duet.
func pairKey(baseline, v string) string { return baseline + "\x00" + v }

// serviceResults returns the own costs of every measured service of variant
// v, compared with the same service in the baseline where it runs there too.
// It returns nothing when v has a single measured service (its costs are
// the totals already).
func serviceResults(baseline, v string, base, rounds map[int]*TrialCosts, roles map[string]string) []ServiceResult {
	var names []string
	for _, tc := range rounds {
		for n := range tc.Services {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) < 2 {
		return nil
	}
	sort.Strings(names)
	var out []ServiceResult
	for _, n := range names {
		sr := ServiceResult{Name: n, Role: roles[n]}
		if sr.Role == "" {
			sr.Role = "app"
		}
		own := func(rs map[int]*TrialCosts) map[int]*TrialCosts {
			o := map[int]*TrialCosts{}
			for r, tc := range rs {
				if c, ok := tc.Services[n]; ok {
					o[r] = &TrialCosts{Costs: c}
				}
			}
			return o
		}
		mine, theirs := own(rounds), own(base)
		for _, c := range ServiceCosts() {
			info := Info(c)
			vals := values(mine, c)
			if len(vals) == 0 {
				continue
			}
			cr := CostResult{Cost: c, Label: info.Label, Unit: info.Unit, Value: mean(vals), Values: vals}
			if v != baseline && len(theirs) > 0 {
				b, x := paired(theirs, mine, c)
				d := Compare(info, b, x)
				cr.Delta = &d
			}
			sr.Costs = append(sr.Costs, cr)
		}
		out = append(out, sr)
	}
	return out
}
