package analyze

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/stats"
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
	ExcludeFlagged bool `json:"exclude_flagged"`
	// IncludeInterrupted is set when trials cut short were kept in the
	// comparisons (by default they are left out).
	IncludeInterrupted bool          `json:"include_interrupted"`
	Steps              []Step        `json:"steps"`
	Trials             []*TrialCosts `json:"trials"`
	Flags              []Flag        `json:"flags,omitempty"`
	// FlagGroups are the flags by cause, one group per code: what a
	// report lists, a line each.
	FlagGroups []FlagGroup `json:"flag_groups,omitempty"`
	Warnings   []Warning   `json:"warnings,omitempty"`
	// Drifts are trends in a variant's per-round CPU per request: a
	// service still warming up, or a machine changing speed.
	Drifts []Drift `json:"drifts,omitempty"`
	// Invalidities say why the run's measurement is not valid, one per
	// load step and variant none of whose trials is sound (every one
	// failed or carries a flag that invalidates it), or, in precision
	// mode, whose primary cost has no interval; empty for a valid run.
	// summary.json holds them in words (Invalid).
	Invalidities []Invalidity `json:"-"`
	// Invalid is Invalidities in words, one line each: analyze leaves it
	// empty; report fills it in when it writes summary.json, and a
	// summary read back has its lines here alone.
	Invalid []string `json:"invalid,omitempty"`
	// Partial says what is missing from a run that did not carry out its
	// whole plan; nil for a complete run.
	Partial *Partial `json:"partial,omitempty"`
	// Targets maps each variant to the load's target as its trials sent
	// to it, placeholders expanded (the manifest keeps the scenario's).
	Targets map[string]string `json:"targets,omitempty"`
	// Headlines are the answer in brief: per load step and variant other
	// than the baseline, its headline costs.
	Headlines []Headline `json:"headlines,omitempty"`
	// Arrivals says how an open-model run's requests arrived (process,
	// release grid, the generator's lateness); nil otherwise.
	Arrivals *Arrivals `json:"arrivals,omitempty"`
	// Warmups says per variant how its variant warm-ups ended, when they
	// could end once its JVMs settled (load.variant_warmup_until).
	Warmups []Warmup `json:"warmups,omitempty"`
	// Settling are the leading rounds of starts left out of the
	// comparisons because their JVMs still compiled what the warm-up left
	// them (settle).
	Settling []Settling `json:"settling,omitempty"`
	// WarmupStarts are the rounds, by load step, left out of the
	// comparisons because a warm-up of starts ahead of their turn began
	// its load with them, beside one-at-a-time rounds
	// (leaveOutWarmupStarts).
	WarmupStarts []StepRounds `json:"warmup_starts,omitempty"`
	// StartNoisePct is, per cost, the standard deviation in percent of
	// what differs between two starts of the same JVM, per side and start,
	// when the run's JVMs were started once (JVMStartNoisePct); the
	// intervals carry it divided among the run's starts (manifest's
	// starts), or the starts' own spread when larger, as each change's
	// FixedPct says. Absent otherwise.
	StartNoisePct map[Cost]float64 `json:"start_noise_pct,omitempty"`
	// Measured is the share of the run's time its measured windows
	// held; nil without a window.
	Measured *Measured `json:"measured,omitempty"`
	// LatencyWithinRun is set when some latency change has an interval:
	// it holds the run's rounds only, and no term for what differs from
	// run to run, which for a latency is often larger (the report says
	// so).
	LatencyWithinRun bool `json:"latency_within_run,omitempty"`
	// CostCurves are what each variant adds across the run's open-model
	// load steps, when there are two rates or more: for CPU and memory a
	// fixed part plus a part per request, for latencies the steps.
	CostCurves []CostCurve `json:"cost_curves,omitempty"`
	// Profiles say, for each variant at each load step whose services
	// were profiled, where its added CPU per request goes (AddProfiles).
	Profiles []ProfileDiff `json:"profiles,omitempty"`
	// ProfileFiles are the variants' profiles per request, for the reports
	// to write (record.VariantProfileFile); not in summary.json.
	ProfileFiles []ProfileFile `json:"-"`
}

// Valid reports whether the run's measurement is valid: no variant at any
// load step is left without a sound trial, as analysed or as read back.
func (s *Summary) Valid() bool { return len(s.Invalidities) == 0 && len(s.Invalid) == 0 }

// Step is one load step's results.
type Step struct {
	Index int `json:"index"`
	// Rate is the open model's arrival rate; Users the closed model's
	// number of users (the other is 0).
	Rate  float64 `json:"target_rate"`
	Users int     `json:"target_users,omitempty"`
	// Idle is set for a load test's step of rate 0: the services were
	// measured with no load, and per-request costs are absent.
	Idle bool `json:"idle,omitempty"`
	// CPULimit is the CPU quota in cores of a start-up experiment's step
	// or of a load test's matrix step (0: none).
	CPULimit float64 `json:"cpu_limit,omitempty"`
	// Workload is "startup" or "job" for those experiments; empty for
	// a load test's step.
	Workload string          `json:"workload,omitempty"`
	Variants []VariantResult `json:"variants"`
	// Window is the analysis window (the measured window less the trims),
	// in seconds from MeasureStart, of the step's longest trial.
	Window *Window `json:"window,omitempty"`
	// Series are each variant's per-second series, all on one time base;
	// Spectra each variant's latency by percentile over its merged
	// histograms. Both come from the trials compared at this step.
	Series  []SeriesSet `json:"series,omitempty"`
	Spectra []Spectrum  `json:"spectra,omitempty"`
	// Binned are each variant's figures over spans of Options.SeriesEvery
	// seconds (a table of CPU every 5 s), when asked for.
	Binned []Binned `json:"binned,omitempty"`
}

// stepOf describes the step trial t ran at.
func stepOf(m *record.Manifest, t *record.Trial) Step {
	st := Step{Index: t.Step, Rate: t.TargetRate, Users: t.TargetUsers, Idle: t.Idle, CPULimit: t.CPULimit}
	if m.Workload != "" && m.Workload != "load" {
		st.Workload = m.Workload
	}
	if t.Startup != nil {
		st.CPULimit = t.Startup.CPULimit
	}
	return st
}

// Label names the step: "300 req/s", "50 users", "idle", "1 CPU" or "no
// CPU limit" (a start-up experiment), "job", or in a load test's matrix
// "1 CPU, 300 req/s".
func (st Step) Label() string {
	cpu := strconv.FormatFloat(st.CPULimit, 'f', -1, 64) + " CPU"
	switch {
	case st.Workload == "startup" && st.CPULimit > 0:
		return cpu
	case st.Workload == "startup":
		return "no CPU limit"
	case st.Workload == "job":
		return "job"
	}
	load := strconv.FormatFloat(st.Rate, 'f', -1, 64) + " req/s"
	switch {
	case st.Users > 0:
		load = fmt.Sprintf("%d users", st.Users)
	case st.Idle:
		load = "idle"
	}
	if st.CPULimit > 0 {
		return cpu + ", " + load
	}
	return load
}

// VariantResult is one variant's costs at one load step. Costs are the
// variant's totals over its measured services; Services holds each measured
// service's own costs.
type VariantResult struct {
	Name   string `json:"name"`
	Rounds int    `json:"rounds"`
	// Ratio is a start-up or job experiment's headline, hyperfine's
	// "1.07 ± 0.02 × baseline wall time" (variants other than the
	// baseline).
	Ratio *Ratio `json:"ratio,omitempty"`
	// NeighbourCores is the mean CPU, in cores, that other variants' idle
	// services used during this variant's windows (restart: once keeps
	// them running); absent when none ran beside it.
	NeighbourCores *float64     `json:"neighbour_cores,omitempty"`
	Costs          []CostResult `json:"costs"`
	// Multiplicity is how many of Costs were tested against the baseline
	// at once, how many would read significant by chance, and how many
	// stay significant once corrected for their number; nil for the
	// baseline and wherever no cost had an interval.
	Multiplicity *Multiplicity   `json:"multiplicity,omitempty"`
	Services     []ServiceResult `json:"services,omitempty"`
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

// ownCosts are the costs a service may have beyond ServiceCosts that some
// of its trials in rs do: its JVM's NMT figures, and its scraped metrics
// (sorted), which only it has and so belong in its own rows.
func ownCosts(rs ...map[int]*TrialCosts) []Cost {
	out := []Cost{JVMCommitted, JVMOffHeap}
	var scraped []Cost
	for _, r := range rs {
		for _, tc := range r {
			for c := range tc.Costs {
				if _, ok := scrapeCostInfo(c); ok && !slices.Contains(scraped, c) {
					scraped = append(scraped, c)
				}
			}
		}
	}
	slices.Sort(scraped)
	return append(out, scraped...)
}

// CostResult is one cost of one variant: its mean over rounds (for
// telemetry counted over each trial's cycle, its count over all the
// rounds' requests: pooledTelemetry) and, for variants other than the
// baseline, its difference from the baseline.
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
	// IncludeInterrupted keeps trials that were cut short (by an interrupt,
	// a service that exited, a failure of the load generator) in the
	// comparisons. By default they are left out: their window is not the
	// one planned, and they are still listed with their flag.
	IncludeInterrupted bool
	// SeriesEvery, when positive, adds to each step a table of its
	// variants' figures over spans of this many seconds (Step.Binned).
	SeriesEvery float64
	// Unreadable lists the run's trial files that could not be read: the
	// run is partial, and says which and why.
	Unreadable []record.Unreadable
	// CostsOnly leaves out what only a report shows, each step's
	// per-second series and latency spectra and each trial's seconds
	// (Step.Series, Step.Spectra, Step.Binned, TrialCosts.Seconds): the
	// summary that a precision run judges after every round, which
	// decoding every second's latency histogram of every trial so far
	// would make longer round by round.
	CostsOnly bool
	// Cache, when set, keeps each trial's own costs for the next summary
	// of the same run: a run summarized again as it grows reads each trial
	// once.
	Cache *TrialCache
}

// Summarize analyses the trials of a run, in stages that each read what
// the ones before set: sortTrials turns each trial into its costs and
// files them by step, variant and round; compareStep compares every
// variant with the baseline at each step (compareVariant, with its
// warnings in variantWarnings and its drift in driftOf) and adds the
// step's series (stepFigures); runWarnings adds what concerns the whole
// run; finish judges the run (flags, corrections, headlines, validity)
// and warns of too few rounds.
func Summarize(m *record.Manifest, trials []*record.Trial, opt Options) (*Summary, error) {
	z := &summarizer{m: m, trials: trials, opt: opt,
		s: &Summary{SchemaVersion: SummarySchemaVersion, Scenario: m.Scenario, Baseline: m.Baseline,
			Variants: m.Variants, Manifest: m, ExcludeFlagged: opt.ExcludeFlagged, IncludeInterrupted: opt.IncludeInterrupted},
		byKey: map[stepVariant]map[int]*TrialCosts{}, startCosts: map[stepVariant]map[int]*TrialCosts{}, steps: map[int]Step{}}
	z.sortTrials()
	for _, si := range slices.Sorted(maps.Keys(z.steps)) {
		z.s.Steps = append(z.s.Steps, z.compareStep(si))
	}
	z.runWarnings()
	return z.finish()
}

// stepVariant keys a variant's trials at a step; a duet's baseline trials
// beside variant v are also filed under pairKey(baseline, v).
type stepVariant struct {
	step    int
	variant string
}

// summarizer is the state of one run's analysis as Summarize's stages
// build it.
type summarizer struct {
	m      *record.Manifest
	trials []*record.Trial
	opt    Options
	s      *Summary
	// byKey holds the trials compared, by step and variant, then round.
	byKey map[stepVariant]map[int]*TrialCosts
	// startCosts holds, keyed as byKey, the costs measured once per start
	// (perStart) of the rounds left out while their start settled: the
	// JIT's transient is in the rounds, not in the start.
	startCosts map[stepVariant]map[int]*TrialCosts
	steps      map[int]Step
	// summarized are the trials behind s.Trials, index for index.
	summarized []*record.Trial
	// starts is jvmStarts', once startedOnce's, cal the calibration of
	// the run's fixed terms and roles each measured service's role.
	starts int
	once   bool
	cal    record.Calibration
	roles  map[string]string
}

// sortTrials summarizes each trial, warns of those that cannot be, and
// files those to compare by step, variant and round; it also sets what
// the comparisons need of the whole run.
func (z *summarizer) sortTrials() {
	m, s, opt := z.m, z.s, z.opt
	for _, t := range z.trials {
		if t.Target != "" {
			if s.Targets == nil {
				s.Targets = map[string]string{}
			}
			s.Targets[t.Variant] = t.Target
		}
		tc, err := opt.Cache.summarize(t, opt.Trim, !opt.CostsOnly)
		if err != nil && t.Interrupted {
			// Cut short before its window: nothing to analyse, but it
			// is not to vanish from the report.
			s.Warnings = append(s.Warnings, warn(WarnTrialCutShort, t.Index, t.Variant, t.Round, oneLine(t.Error)))
			continue
		}
		if err != nil {
			s.Warnings = append(s.Warnings, warn(WarnTrialUnanalysable, err.Error()))
			continue
		}
		s.Trials = append(s.Trials, tc)
		z.summarized = append(z.summarized, t)
		z.steps[t.Step] = stepOf(m, t)
	}
	var warns []Warning
	s.Warmups, warns = warmups(m.Variants, z.trials, m.Load.VariantWarmupUntil)
	s.Warnings = append(s.Warnings, warns...)
	// Telemetry is counted over each trial's cycle, which reaches past its
	// window, so whether a trial exported anything is known only now.
	attributeTelemetry(z.trials, s.Trials)
	for i, tc := range s.Trials {
		t := z.summarized[i]
		tc.Flags = append(tc.Flags, flagTelemetry(t, tc)...)
		s.Flags = append(s.Flags, tc.Flags...)
		// A failed job or start is shown, never averaged in, and so is a
		// trial that did not measure what was planned.
		if bad, _ := failed(t); bad || (opt.ExcludeFlagged && len(tc.Flags) > 0) || (t.Interrupted && !opt.IncludeInterrupted) || unplanned(t, tc.Flags, opt.IncludeInterrupted) {
			tc.Excluded = true
			continue
		}
		z.file(stepVariant{t.Step, t.Variant}, t.Round, tc)
		if t.Pair != "" {
			// A duet's baseline trial pairs with the variant beside it only.
			z.file(stepVariant{t.Step, pairKey(t.Variant, t.Pair)}, t.Round, tc)
		}
	}
	z.starts, z.once, z.cal = jvmStarts(m, s.Trials), startedOnce(m), CalibrationOf(m)
	if z.starts > 0 {
		s.StartNoisePct = jvmStartNoise(z.cal)
	}
	z.settle()
	if ms, ok := measured(m, z.trials); ok {
		if len(s.Settling) > 0 {
			counted := map[*record.Trial]bool{}
			for _, t := range z.countedTrials() {
				counted[t] = true
			}
			ms.CountedS = countedWindow(z.trials, counted)
		}
		s.Measured = &ms
	}
	z.roles = map[string]string{}
	for _, t := range z.trials {
		for _, sr := range t.Services {
			if sr.Measured {
				z.roles[sr.Name] = sr.Role
			}
		}
	}
}

// countedTrials returns the trials the comparisons count: neither left out
// nor settling, and, in a duet, beside a counted trial of their partner,
// since the window is the pair's and a comparison reads both or neither.
func (z *summarizer) countedTrials() []*record.Trial {
	side := func(tc *TrialCosts) stepRound {
		if tc.Pair != "" {
			return stepRound{tc.Step, tc.Round, pairKey(tc.Variant, tc.Pair)}
		}
		return stepRound{tc.Step, tc.Round, tc.Variant}
	}
	partner := func(tc *TrialCosts) stepRound {
		if tc.Pair != "" {
			return stepRound{tc.Step, tc.Round, tc.Pair}
		}
		return stepRound{tc.Step, tc.Round, pairKey(z.m.Baseline, tc.Variant)}
	}
	left := map[stepRound]bool{}
	for _, tc := range z.s.Trials {
		if tc.Excluded || tc.Settling {
			left[side(tc)] = true
		}
	}
	var counted []*record.Trial
	for i, tc := range z.s.Trials {
		if !tc.Excluded && !tc.Settling && !left[partner(tc)] {
			counted = append(counted, z.summarized[i])
		}
	}
	return counted
}

// stepRound names the trial of a variant in a round of a load step.
type stepRound struct {
	step, round int
	variant     string
}

// file puts tc under k for its round.
func (z *summarizer) file(k stepVariant, round int, tc *TrialCosts) {
	if z.byKey[k] == nil {
		z.byKey[k] = map[int]*TrialCosts{}
	}
	z.byKey[k][round] = tc
}

// leaveOut removes round r from the trials of k compared, keeping its
// costs measured once per start (perStart) in z.startCosts: a round left
// out while its start settled still holds that start's figures.
func (z *summarizer) leaveOut(k stepVariant, r int) {
	tc, ok := z.byKey[k][r]
	if !ok {
		return
	}
	delete(z.byKey[k], r)
	perStart := func(costs map[Cost]float64) map[Cost]float64 {
		out := map[Cost]float64{}
		for c, v := range costs {
			if c.perStart() {
				out[c] = v
			}
		}
		return out
	}
	kept := &TrialCosts{Index: tc.Index, Round: tc.Round, Launch: tc.Launch, Step: tc.Step, Variant: tc.Variant, Pair: tc.Pair,
		Costs: perStart(tc.Costs), Services: map[string]map[Cost]float64{}}
	for n, sc := range tc.Services {
		if sc = perStart(sc); len(sc) > 0 {
			kept.Services[n] = sc
		}
	}
	if len(kept.Costs) == 0 && len(kept.Services) == 0 {
		return
	}
	if z.startCosts[k] == nil {
		z.startCosts[k] = map[int]*TrialCosts{}
	}
	z.startCosts[k][r] = kept
}

// withStartCosts returns rounds, the trials of k compared, with the
// per-start costs of k's rounds left out while their start settled
// (leaveOut): what a cost measured once per start is read from. Every
// other cost reads the same from either.
func (z *summarizer) withStartCosts(k stepVariant, rounds map[int]*TrialCosts) map[int]*TrialCosts {
	kept := z.startCosts[k]
	if len(kept) == 0 {
		return rounds
	}
	out := maps.Clone(rounds)
	if out == nil {
		out = map[int]*TrialCosts{}
	}
	for r, tc := range kept {
		if _, ok := out[r]; !ok {
			out[r] = tc
		}
	}
	return out
}

// baseOf returns the baseline's trials at step si that variant v is
// compared with: in a duet, those beside it.
func (z *summarizer) baseOf(si int, v string) map[int]*TrialCosts {
	return z.byKey[z.baseKey(si, v)]
}

// baseKey is the key of baseOf's trials: those beside v in a duet, or
// else the baseline's.
func (z *summarizer) baseKey(si int, v string) stepVariant {
	if duet := (stepVariant{si, pairKey(z.m.Baseline, v)}); z.byKey[duet] != nil {
		return duet
	}
	return stepVariant{si, z.m.Baseline}
}

// baseWithStartCosts is baseOf with the per-start costs of the rounds
// left out while a start settled (withStartCosts).
func (z *summarizer) baseWithStartCosts(si int, v string) map[int]*TrialCosts {
	k := z.baseKey(si, v)
	return z.withStartCosts(k, z.byKey[k])
}

// compareStep returns step si with every variant compared with the
// baseline and the step's series.
func (z *summarizer) compareStep(si int) Step {
	st := z.steps[si]
	for _, v := range z.m.Variants {
		st.Variants = append(st.Variants, z.compareVariant(st, v))
	}
	z.stepFigures(&st, si)
	return st
}

// compareVariant compares variant v with the baseline at step st, cost by
// cost, and adds the warnings its comparison calls for.
func (z *summarizer) compareVariant(st Step, v string) VariantResult {
	m, si := z.m, st.Index
	rounds := z.byKey[stepVariant{si, v}]
	vr := VariantResult{Name: v, Rounds: len(rounds)}
	// Costs measured once per start read every start, its leading rounds
	// left out or not; the rest read the rounds compared.
	withStart := z.withStartCosts(stepVariant{si, v}, rounds)
	var c costNotes
	for _, info := range costsOf(z.s.Trials) {
		vals := values(withStart, info.Cost)
		if len(vals) == 0 {
			continue
		}
		cr := CostResult{Cost: info.Cost, Label: info.Label, Unit: info.Unit, Value: stats.Mean(vals), Values: vals}
		pooled, isPooled := pooledTelemetry(rounds, info.Cost)
		if isPooled {
			cr.Value = pooled
		}
		if v != m.Baseline {
			d := z.compareCost(si, v, info, withStart, &c)
			if isPooled {
				z.poolDifference(&d, si, v, info.Cost, pooled)
			}
			cr.Delta = &d
			if isLatency(info.Cost) && d.CILow != nil {
				z.s.LatencyWithinRun = true
			}
		}
		vr.Costs = append(vr.Costs, cr)
	}
	z.variantWarnings(st, v, vr, rounds, c)
	if n, _, ok := meanNeighbours(rounds); ok {
		vr.NeighbourCores = &n
	}
	if d, ok := z.driftOf(si, v, rounds); ok {
		z.s.Drifts = append(z.s.Drifts, d)
		z.s.Warnings = append(z.s.Warnings, d.warning(st.Label()))
	}
	if hc, name := headline(m.Workload); hc != "" && v != m.Baseline {
		for _, cr := range vr.Costs {
			if cr.Cost == hc {
				vr.Ratio = ratioOf(hc, name, cr.Delta)
			}
		}
	}
	if label := workLabel(z.trials); label != "" {
		for i := range vr.Costs {
			if vr.Costs[i].Cost == JobWallPerWork {
				vr.Costs[i].Label = label
			}
		}
	}
	vr.Services = serviceResults(z.cal, m.Baseline, v, z.baseWithStartCosts(si, v), withStart, z.roles, z.starts, z.once)
	return vr
}

// costNotes are the labels of a variant's costs that its warnings name:
// those with no round of the A/A control to correct by, those whose starts
// differed more than the start-to-start term, and those whose bootstrap
// and t intervals disagree.
type costNotes struct {
	uncontrolled, spread, disagree []string
}

// compareCost compares variant v's cost info at step si with the
// baseline's, corrected by the A/A control where the run has one, and
// notes in c what its warnings need.
func (z *summarizer) compareCost(si int, v string, info CostInfo, rounds map[int]*TrialCosts, c *costNotes) Delta {
	m := z.m
	b, x, launches := paired(z.baseWithStartCosts(si, v), rounds, info.Cost)
	d, fixed, raised := compareCost(z.cal, info, b, x, launches, z.starts, z.once)
	if raised {
		c.spread = append(c.spread, info.Label)
	}
	d.launches = launches
	if m.Control != "" && v != m.Control {
		if cb, cx, ok := controlled(info, z.baseWithStartCosts(si, v), rounds, z.baseWithStartCosts(si, m.Control), z.withStartCosts(stepVariant{si, m.Control}, z.byKey[stepVariant{si, m.Control}])); ok {
			d = Compare(info, cb, cx, fixed)
			d.Controlled = true
			d.launches = nil
		} else {
			c.uncontrolled = append(c.uncontrolled, info.Label)
		}
	}
	if SharedDuet(m) && m.Load.SliceS == 0 && isLatency(info.Cost) {
		d = notComparable(d, WhySharedDuet, m)
	}
	if concurrent(m) && isMachine(info.Cost) {
		d = notComparable(d, WhyOneMachine, m)
	}
	if pr := m.Precision; pr != nil {
		if margin, ok := pr.Targets[string(info.Cost)]; ok {
			d.JudgeEquivalence(margin)
		}
	}
	if d.N >= minRoundsForBootstrap && !d.BootstrapAgrees {
		c.disagree = append(c.disagree, info.Label)
	}
	return d
}

// variantWarnings adds the warnings of variant v's comparison at step st
// (vr, from its rounds), c the costs they name.
func (z *summarizer) variantWarnings(st Step, v string, vr VariantResult, rounds map[int]*TrialCosts, c costNotes) {
	m, s, step := z.m, z.s, st.Label()
	if len(c.uncontrolled) > 0 && v != m.Baseline {
		s.Warnings = append(s.Warnings, warn(WarnControlMissing, v, step, c.uncontrolled))
	}
	if v == m.Control {
		for _, cr := range vr.Costs {
			if cr.Cost == CPUPerRequest && cr.Delta != nil && cr.Delta.Significant {
				r := cr.Delta.Reading
				unit := r.Unit
				if r.Ratio {
					unit = "%"
				}
				s.Warnings = append(s.Warnings, warn(WarnControlBias, r.Estimate, r.HalfWidth, unit, r.Digits, step))
			}
		}
	}
	if len(c.spread) > 0 {
		s.Warnings = append(s.Warnings, warn(WarnStartSpread, v, step, c.spread, z.starts))
	}
	if len(c.disagree) > 0 {
		s.Warnings = append(s.Warnings, warn(WarnBootstrapDisagrees, v, step, c.disagree, m.Precision != nil))
	}
	if w, ok := jitWarning(v, step, rounds, warmupOwnerOf(m)); ok && st.Workload == "" {
		s.Warnings = append(s.Warnings, w)
	}
	if w, ok := sliceWarning(m, v, step, rounds); ok {
		s.Warnings = append(s.Warnings, w)
	}
	if v != m.Baseline {
		base := z.baseOf(st.Index, v)
		baseCores := stats.Mean(values(base, CPUCores))
		if w, ok := neighbourWarning(m.Baseline, v, step, base, rounds, baseCores); ok {
			s.Warnings = append(s.Warnings, w)
		}
	}
}

// driftOf returns the drift of variant v's CPU per request over its rounds
// at step si, with that of its ratio to the baseline (for the baseline,
// the largest of every variant's ratio to it); false without one.
func (z *summarizer) driftOf(si int, v string, rounds map[int]*TrialCosts) (Drift, bool) {
	m := z.m
	byRound := map[int]float64{}
	for r, tc := range rounds {
		if x, ok := tc.Costs[CPUPerRequest]; ok {
			byRound[r] = x
		}
	}
	change, p, ok := findDrift(byRound)
	if !ok {
		return Drift{}, false
	}
	d := Drift{Variant: v, Step: si, Cost: CPUPerRequest, Rounds: len(byRound), ChangePct: change, PValue: p, baseline: v == m.Baseline, by: warmupOwnerOf(m)}
	if v != m.Baseline {
		if rc, trend, ok := ratioDrift(rounds, z.baseOf(si, v), CPUPerRequest); ok {
			d.RatioChangePct, d.RatioTrend = &rc, trend
		}
		return d, true
	}
	// The baseline's own level moved: do its comparisons?
	for _, w := range m.Variants {
		if w == m.Baseline {
			continue
		}
		rc, trend, ok := ratioDrift(z.byKey[stepVariant{si, w}], z.baseOf(si, w), CPUPerRequest)
		if !ok {
			continue
		}
		if d.RatioChangePct == nil || math.Abs(rc) > math.Abs(*d.RatioChangePct) {
			d.RatioChangePct = &rc
		}
		d.RatioTrend = d.RatioTrend || trend
	}
	return d, true
}

// stepFigures sets step st's window, per-second series, spans
// (Options.SeriesEvery) and latency spectra from the trials compared at
// step si; only its window with Options.CostsOnly.
func (z *summarizer) stepFigures(st *Step, si int) {
	var compared []*record.Trial
	var tcs []*TrialCosts
	for i, tc := range z.s.Trials {
		if t := z.summarized[i]; t.Step == si && !tc.Excluded {
			compared, tcs = append(compared, t), append(tcs, tc)
			w := tc.Window
			if st.Window == nil || w.To > st.Window.To {
				st.Window = &w
			}
		}
	}
	if z.opt.CostsOnly {
		return
	}
	st.Series = stepSeries(z.m.Variants, compared)
	if z.opt.SeriesEvery > 0 {
		st.Binned = binSeconds(z.m.Variants, tcs, z.opt.SeriesEvery)
	}
	st.Spectra = stepSpectra(z.m.Variants, compared, z.opt.Trim)
}

// runWarnings adds the warnings that concern the whole run: services
// started once, JVMs' starts, shared CPUs saturated.
func (z *summarizer) runWarnings() {
	m, s := z.m, z.s
	if w, ok := restartOnceWarning(m, z.trials); ok {
		s.Warnings = append(s.Warnings, w)
	}
	if w, ok := jvmStartWarning(s.StartNoisePct, z.starts, weightedStarts(s.Trials, m.Baseline, z.starts), m.Precision != nil); ok {
		s.Warnings = append(s.Warnings, w)
	}
	if w, ok := sharedCPUsBusyWarning(m, s.Trials); ok {
		s.Warnings = append(s.Warnings, w)
	}
	s.Warnings = append(s.Warnings, setupWarnings(z.trials)...)
}

// finish judges the run as a whole: its flags by cause, each variant's
// costs corrected for their number, the headlines, how requests arrived,
// whether it is valid and whole; and warns of steps with too few rounds
// for a useful interval.
func (z *summarizer) finish() (*Summary, error) {
	m, s := z.m, z.s
	s.FlagGroups = groupFlags(s.Flags, len(s.Trials), func(trial int) bool {
		for _, tc := range s.Trials {
			if tc.Index == trial {
				return tc.Excluded
			}
		}
		return false
	})
	for si := range s.Steps {
		for vi := range s.Steps[si].Variants {
			vr := &s.Steps[si].Variants[vi]
			vr.Multiplicity = correctDeltas(vr.Costs)
		}
	}
	s.Headlines = headlines(s)
	s.CostCurves = CostCurves(s)
	s.Arrivals = arrivalsOf(m, z.summarized, s.Trials)
	s.Invalidities = append(invalidRun(m, z.trials, s, z.opt.IncludeInterrupted), unanswered(m, s)...)
	s.Partial = partialRun(m, z.trials, z.opt.Unreadable)
	if len(s.Trials) == 0 {
		return s, fmt.Errorf("no trial to analyse")
	}
	for _, st := range s.Steps {
		for _, vr := range st.Variants {
			if vr.Rounds < minRoundsForBootstrap && vr.Name != m.Baseline {
				// In precision mode toll chose the rounds; only the budget
				// is the user's.
				cut, least := budgetCut(m, st.Index), 0
				if cut {
					least = m.Precision.MinRounds
				}
				s.Warnings = append(s.Warnings, warn(WarnFewRounds, vr.Name, vr.Rounds, st.Workload != "", st.Label(), minRoundsForBootstrap, cut, least))
			}
		}
	}
	return s, nil
}

// oneLine returns the first line of a message (an error may be followed by
// the lines of a service's log).
func oneLine(msg string) string {
	first, _, _ := strings.Cut(msg, "\n")
	return first
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
func paired(base, vari map[int]*TrialCosts, c Cost) (b, v []float64, launches []int) {
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
			launches = append(launches, vari[r].Launch)
		}
	}
	return b, v, launches
}

// sideFixed returns the variance, in squared log units, that effects fixed
// for the run add to each side's level of cost c in a change whose paired
// rounds are base and vari, each run under its start of the services in
// launches: fixedVariance for JVMs started starts times (0: none started
// once), or, when they started several times and the change's rounds
// differed between starts more than cal's JVMStartNoisePct allows
// (startSpread), what the starts showed; raised reports the latter.
func sideFixed(cal record.Calibration, c Cost, starts int, base, vari []float64, launches []int) (v float64, raised bool) {
	var xs []float64
	var ls []int
	for i := range base {
		if base[i] > 0 && vari[i] > 0 {
			xs = append(xs, math.Log(vari[i]/base[i]))
			ls = append(ls, launches[i])
		}
	}
	return sideFixedLog(cal, c, starts, xs, ls)
}

// startCount returns how many starts the rounds' mean averages when the
// run started its JVMs starts times and its rounds ran under the starts in
// ls: each start weighs by its rounds (effectiveStarts), at most starts.
func startCount(starts int, ls []int) float64 {
	k := float64(starts)
	if e := effectiveStarts(ls); starts >= 2 && e > 0 && e < k {
		k = e
	}
	return k
}

// sideFixedLog is sideFixed from the paired rounds' log ratios xs, each
// run under the start in launches.
func sideFixedLog(cal record.Calibration, c Cost, starts int, xs []float64, ls []int) (v float64, raised bool) {
	k := startCount(starts, ls)
	v = fixedVariance(cal, c, k)
	if starts < 2 || cal.JVMStartNoisePct[string(c)] == 0 {
		return v, false
	}
	tau, ok := startSpread(xs, ls)
	if !ok {
		return v, false
	}
	// tau is a change's, both sides'; each side's level averages the
	// run's starts.
	if w := fixedVariance(cal, c, 0) + tau/2/k; w > v {
		return w, true
	}
	return v, false
}

// controlled pairs, round by round, a variant's values of cost c with a
// baseline corrected by the run's A/A control: in round r the variant vari
// is compared with base[r] × ctl[r] / ctlBase[r] (a ratio cost) or base[r]
// + ctl[r] − ctlBase[r] (an additive one), so that Compare's per-round
// change is the variant's against its baseline less the control's against
// its own. Only rounds with all four values count; ok is false with fewer
// than two.
func controlled(info CostInfo, base, vari, ctlBase, ctl map[int]*TrialCosts) (adj, v []float64, ok bool) {
	var rs []int
	for r := range vari {
		rs = append(rs, r)
	}
	sort.Ints(rs)
	for _, r := range rs {
		b, c, cb := base[r], ctl[r], ctlBase[r]
		if b == nil || c == nil || cb == nil {
			continue
		}
		bv, ok1 := b.Costs[info.Cost]
		cv, ok2 := c.Costs[info.Cost]
		cbv, ok3 := cb.Costs[info.Cost]
		vv, ok4 := vari[r].Costs[info.Cost]
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue
		}
		a := bv + cv - cbv
		if !info.Additive && bv > 0 && cv > 0 && cbv > 0 {
			a = bv * cv / cbv
		}
		adj, v = append(adj, a), append(v, vv)
	}
	return adj, v, len(v) >= 2
}

// countedOverCycle reports whether attributeTelemetry counts cost c over
// each trial's cycle: per request, or per request times the window's rate.
func countedOverCycle(c Cost) bool {
	switch c {
	case SpansPerReq, Spans, ExportBytes, Rejected, RejectedBytes:
		return true
	}
	return false
}

// pooledTelemetry returns a variant's value of telemetry cost c over its
// rounds: everything its sink received over all their cycles per request
// of them all (times the rounds' mean rate, for a cost per second), where
// a mean over rounds would weigh each round's count alone. Where a busy
// machine holds a batch back past the start of the variant's next trial,
// it falls in that trial's count, not its own: one round reads high and
// its predecessor low (4.7 and 3.9 spans per request for 4), and a round
// whose cycle held the variant warm-up's requests weighs, here, as many
// requests as it counted. Rounds without c (attributeTelemetry's) are
// left out; ok is false where a round with c was not counted so, or none
// has it.
func pooledTelemetry(rounds map[int]*TrialCosts, c Cost) (v float64, ok bool) {
	if !countedOverCycle(c) {
		return 0, false
	}
	var items, reqs, rate float64
	n := 0
	for _, tc := range rounds {
		x, has := tc.Costs[c]
		if !has {
			continue
		}
		if tc.cycleRequests <= 0 {
			return 0, false
		}
		n++
		perReq := x
		if c != SpansPerReq {
			tp := tc.Costs[Throughput]
			if tp <= 0 {
				return 0, false
			}
			perReq = x / tp
			rate += tp
		}
		items += perReq * tc.cycleRequests
		reqs += tc.cycleRequests
	}
	if n == 0 {
		return 0, false
	}
	v = items / reqs
	if c != SpansPerReq {
		v *= rate / float64(n)
	}
	return v, true
}

// poolDifference centres the difference d of telemetry cost c between
// variant v, whose pooled value is pv, and its baseline at step si on
// their pooled values (pooledTelemetry), as the table shows them, its
// interval moved with it; the change in percent stays the rounds'.
func (z *summarizer) poolDifference(d *Delta, si int, v string, c Cost, pv float64) {
	if d.Controlled {
		return
	}
	pb, ok := pooledTelemetry(z.baseOf(si, v), c)
	if !ok {
		return
	}
	shift := pv - pb - d.Abs
	d.Abs += shift
	if d.AbsCILow != nil && d.AbsCIHigh != nil {
		lo, hi := *d.AbsCILow+shift, *d.AbsCIHigh+shift
		d.AbsCILow, d.AbsCIHigh = &lo, &hi
	}
}

// attributeTelemetry counts each trial's exported telemetry over its whole
// cycle. An exporter sends in batches, and what it still holds when a
// window closes is flushed later, while the variant is idle (a batch span
// processor's timer) or as its services stop — never inside a window. Each
// variant has a sink of its own, so everything its sink received from the
// start of one of its trials to the end of its cycle was caused by that
// trial's requests (warm-up and window). The cycle ends when the variant's
// services were stopped after the trial (TelemetryEnd; what they send as
// they start again is not the trial's), or else at the start of the
// variant's next trial. Telemetry per request is that count over those
// requests, and telemetry per second is that times the window's achieved
// rate. A trial whose cycle has no end recorded (the run's last, killed)
// keeps the count inside its window.
//
// A trial whose cycle began with a variant warm-up at another load (its
// users, or its rate) reads no telemetry while the variant has another
// trial at its step: what its sink received mixes the warm-up's load with
// the trial's, and an exporter that drops spans at the warm-up's rate, or
// flushes its full queue into the window, would weigh that load in the
// trial's figure, and in a pooled one as many times as the warm-up sent
// more requests.
func attributeTelemetry(trials []*record.Trial, costs []*TrialCosts) {
	byIndex := map[int]*TrialCosts{}
	for _, tc := range costs {
		byIndex[tc.Index] = tc
	}
	next := map[int]*record.Trial{} // trial index → the variant's next trial
	last := map[string]*record.Trial{}
	atTrialLoad := map[stepVariant]bool{}
	for _, t := range trials { // in run order
		if prev := last[t.Variant]; prev != nil {
			next[prev.Index] = t
		}
		last[t.Variant] = t
		if len(t.Telemetry) > 0 && !t.Load.WarmupAtOtherLoad {
			atTrialLoad[stepVariant{t.Step, t.Variant}] = true
		}
	}
	for _, t := range trials {
		tc := byIndex[t.Index]
		if tc == nil || len(t.Telemetry) == 0 {
			continue
		}
		if t.Load.WarmupAtOtherLoad && atTrialLoad[stepVariant{t.Step, t.Variant}] {
			for c := range tc.Costs {
				if countedOverCycle(c) {
					delete(tc.Costs, c)
				}
			}
			tc.telemetryLeftOut = true
			continue
		}
		end := t.TelemetryEnd
		if n := next[t.Index]; end == nil && n != nil && len(n.Telemetry) > 0 {
			end = &n.Telemetry[0]
		}
		if end == nil {
			continue
		}
		warmup := t.MeasureStart.Sub(t.Start).Seconds()
		reqs := t.TargetRate*warmup + float64(t.Load.Sent)
		if t.Load.WarmupCompleted > 0 || t.TargetRate == 0 {
			reqs = float64(t.Load.WarmupCompleted + t.Load.Sent)
		}
		if reqs <= 0 {
			continue
		}
		from := t.Telemetry[0]
		if end.Spans < from.Spans || end.Bytes < from.Bytes || end.Rejected < from.Rejected || end.RejectedBytes < from.RejectedBytes {
			continue // a sink that restarted: keep the window's count
		}
		perReq := float64(end.Spans-from.Spans) / reqs
		tc.cycleRequests = reqs
		tc.Costs[SpansPerReq] = perReq
		tc.Costs[Spans] = perReq * tc.Costs[Throughput]
		tc.Costs[ExportBytes] = float64(acceptedBytes(*end)-acceptedBytes(from)) / reqs * tc.Costs[Throughput] / 1024
		tc.Costs[Rejected] = float64(end.Rejected-from.Rejected) / reqs * tc.Costs[Throughput]
		tc.Costs[RejectedBytes] = float64(end.RejectedBytes-from.RejectedBytes) / reqs * tc.Costs[Throughput] / 1024
	}
}

// SharedDuet says whether the run was a duet whose two sides shared their
// CPUs (pinning.duet: shared), or variants together (which always share
// them). Unless their loads took turns (load.slice), each side's latency
// held the others' requests.
func SharedDuet(m *record.Manifest) bool {
	d := m.Layout.DuetCPUs
	return concurrent(m) && len(d) == 2 && d[0] == d[1]
}

// concurrent says whether the run's variants ran their trials at the same
// time: a duet, or all together.
func concurrent(m *record.Manifest) bool {
	return m.Mode == "duet" || m.Mode == "together"
}

// isLatency says whether c is a latency percentile, of the whole mix or of
// one of its requests.
func isLatency(c Cost) bool {
	if _, base, ok := requestCostParts(c); ok {
		c = base
	}
	return strings.HasPrefix(string(c), "latency_")
}

// isMachine says whether c is a reading of the whole machine (its CPU,
// steal, memory), which the two sides of a duet take at the same moments.
func isMachine(c Cost) bool { return strings.HasPrefix(string(c), "machine_") }

// notComparable keeps d's paired values but withdraws its interval and
// verdict: the design of run m makes the difference meaningless (why).
func notComparable(d Delta, why WhyCode, m *record.Manifest) Delta {
	d = withoutInterval(d, NoVerdictDesign)
	d.Pct = nil
	d.Reading = Reading{Code: ReadNotComparable, Why: why}
	if why == WhyOneMachine {
		d.Reading.Mode = m.Mode
	}
	return d
}

// withoutInterval returns d with its interval and everything read from it
// withdrawn, its estimates kept, and code saying why (Delta.NoVerdict).
func withoutInterval(d Delta, code string) Delta {
	d.CILow, d.CIHigh, d.PValue = nil, nil, nil
	d.AbsCILow, d.AbsCIHigh = nil, nil
	d.Significant, d.BootstrapAgrees, d.Size = false, true, SizeNone
	d.NoVerdict = code
	d.Settle()
	return d
}

// pairKey names the baseline trials that ran beside variant v in a duet.
func pairKey(baseline, v string) string { return baseline + "\x00" + v }

// splitPairKey returns the baseline and the variant that key, a pairKey,
// names; ok is false for a key that names one variant.
func splitPairKey(key string) (baseline, v string, ok bool) {
	return strings.Cut(key, "\x00")
}

// serviceResults returns the own costs of every measured service of variant
// v, compared with the same service in the baseline where it runs there too.
// It returns nothing when v has a single measured service (its costs are
// the totals already). starts is jvmStarts' count, which sets the
// start-to-start term of cal (fixedVariance); once is startedOnce's, under
// which a cost that varies by start compares starts (compareStarts).
func serviceResults(cal record.Calibration, baseline, v string, base, rounds map[int]*TrialCosts, roles map[string]string, starts int, once bool) []ServiceResult {
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
					o[r] = &TrialCosts{Launch: tc.Launch, Costs: c}
				}
			}
			return o
		}
		mine, theirs := own(rounds), own(base)
		for _, c := range append(ServiceCosts(), ownCosts(mine, theirs)...) {
			info := Info(c)
			vals := values(mine, c)
			if len(vals) == 0 {
				continue
			}
			cr := CostResult{Cost: c, Label: info.Label, Unit: info.Unit, Value: stats.Mean(vals), Values: vals}
			if v != baseline && len(theirs) > 0 {
				b, x, launches := paired(theirs, mine, c)
				d, _, _ := compareCost(cal, info, b, x, launches, starts, once)
				cr.Delta = &d
			}
			sr.Costs = append(sr.Costs, cr)
		}
		out = append(out, sr)
	}
	return out
}

// budgetCut reports whether m, a run in precision mode, spent its budget
// at step index step before the stopping rule's minimum of rounds.
func budgetCut(m *record.Manifest, step int) bool {
	if m.Precision == nil {
		return false
	}
	for _, p := range m.Precision.Steps {
		if p.Step == step {
			return p.Stop == string(BudgetSpent) && p.Rounds < m.Precision.MinRounds
		}
	}
	return false
}
