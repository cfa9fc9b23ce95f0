package analyze

import (
	"maps"
	"slices"
	"sort"

	"github.com/tollperf/toll/record"
)

// jitBusy is the JIT compile time, in ms per second of the window (2% of a
// core), above which a JVM under steady load is taken to be still warming
// up: once its hot code is compiled a JVM compiles next to nothing, while
// in the minutes after its start it compiles for hundreds of ms a second.
const jitBusy = 20

// jitWarning says which of a variant's measured JVMs were still compiling
// in which rounds of a load step, or is empty. Their CPU and latency there
// include the JIT's own work and code not yet compiled: the comparison
// measures a moving target (docs/method.md, "A JVM still compiling").
//
// When toll chose the warm-up (a run in precision mode), it says what toll
// did instead of which setting to change; when the scenario starts its
// services afresh every round or trial, that warming is what it measures.
func jitWarning(variant, step string, rounds map[int]*TrialCosts, by warmupOwner) (Warning, bool) {
	busy := map[string][]int{}
	peak := map[string]float64{}
	compilersRead := false
	for r, tc := range rounds {
		for svc, costs := range tc.Services {
			if _, ok := costs[JITCPU]; ok {
				compilersRead = true
			}
			if ms, ok := costs[JITTime]; ok && ms > jitBusy {
				busy[svc] = append(busy[svc], r)
				peak[svc] = max(peak[svc], ms)
			}
		}
	}
	if len(busy) == 0 {
		return Warning{}, false
	}
	args := []any{variant, step, by.arg(), compilersRead}
	for _, svc := range slices.Sorted(maps.Keys(busy)) {
		rs := busy[svc]
		sort.Ints(rs)
		args = append(args, svc, rs, peak[svc])
	}
	return warn(WarnJITUnderLoad, args...), true
}

// warmupOwner says who chose how a run's services were warmed, which
// decides what a warning about a service still warming up advises.
type warmupOwner int

const (
	// warmupByUser: the scenario's settings (a fixed design, or a
	// warm-up it names); a warning names the setting to change.
	warmupByUser warmupOwner = iota
	// warmupByToll: toll chose the warm-up and the starts (precision mode).
	warmupByToll
	// warmupFresh: a run in precision mode whose scenario starts its
	// services afresh every round or trial, to measure them so.
	warmupFresh
)

// arg returns who chose the warm-up as a warning's argument.
func (o warmupOwner) arg() string {
	switch o {
	case warmupByToll:
		return WarmupByToll
	case warmupFresh:
		return WarmupByFresh
	}
	return WarmupByUser
}

// warmupOwnerOf returns who chose m's warm-up.
func warmupOwnerOf(m *record.Manifest) warmupOwner {
	switch {
	case m.Precision == nil:
		return warmupByUser
	case m.Load.VariantWarmupUntil != nil && m.Load.VariantWarmupUntil.Auto:
		return warmupByToll
	case m.Restart == "per-round" || m.Restart == "per-trial":
		return warmupFresh
	}
	return warmupByUser
}

// Warmup is how a variant's warm-ups with an end condition
// (load.variant_warmup_until) went over a run: one per start of its
// services.
type Warmup struct {
	Variant string `json:"variant"`
	// Count is its warm-ups; Settled those that ended because its JVMs
	// settled, before their maximum; Steady those of Settled that ended
	// because its CPU per request had stopped moving while a JIT still
	// compiled.
	Count   int `json:"count"`
	Settled int `json:"settled"`
	Steady  int `json:"steady,omitempty"`
	// NoJVM is set when no measured service of the variant was a JVM: its
	// warm-ups had nothing to wait for and lasted their maximum.
	NoJVM bool `json:"no_jvm,omitempty"`
	// ShortestS and LongestS bound how long they lasted, in seconds.
	ShortestS float64 `json:"shortest_s"`
	LongestS  float64 `json:"longest_s"`
}

// warmups summarizes the variant warm-ups the trials record, in variant
// order, and warns of each that reached its maximum with a JVM still
// compiling: the trial after it measured a moving target.
func warmups(variants []string, trials []*record.Trial, until *record.WarmupUntil) ([]Warmup, []Warning) {
	byVariant := map[string]*Warmup{}
	var warnings []Warning
	for _, t := range trials {
		w := t.VariantWarmup
		if w == nil {
			continue
		}
		s := byVariant[t.Variant]
		if s == nil {
			s = &Warmup{Variant: t.Variant, NoJVM: true, ShortestS: t.VariantWarmupS}
			byVariant[t.Variant] = s
		}
		s.Count++
		s.ShortestS, s.LongestS = min(s.ShortestS, t.VariantWarmupS), max(s.LongestS, t.VariantWarmupS)
		s.NoJVM = s.NoJVM && w.NoJVM
		switch {
		case w.Settled:
			s.Settled++
			if w.CostSteady {
				s.Steady++
			}
		case !w.NoJVM:
			warnings = append(warnings, warmupWarning(t, until))
		}
	}
	var out []Warmup
	for _, v := range variants {
		if s := byVariant[v]; s != nil {
			out = append(out, *s)
		}
	}
	return out, warnings
}

// warmupWarning says that the warm-up before trial t ended with its JVMs
// still compiling, at what rate.
func warmupWarning(t *record.Trial, until *record.WarmupUntil) Warning {
	svcs := slices.Sorted(maps.Keys(t.VariantWarmup.JITMsPerS))
	rates := make([]float64, len(svcs))
	for i, svc := range svcs {
		rates[i] = t.VariantWarmup.JITMsPerS[svc]
	}
	var below, over float64
	if until != nil {
		below, over = until.JITBelowMs, until.OverS
	}
	cut := t.VariantWarmupS < t.VariantWarmup.MaxS-0.5
	return warn(WarnWarmupUnsettled, t.Variant, t.Index, t.Round, cut, t.VariantWarmup.MaxS, t.VariantWarmupS,
		until != nil, below, over, until != nil && until.Auto, svcs, rates)
}
