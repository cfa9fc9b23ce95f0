package analyze

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

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
func jitWarning(variant, step string, rounds map[int]*TrialCosts, by warmupOwner) string {
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
		return ""
	}
	var parts []string
	for _, svc := range slices.Sorted(maps.Keys(busy)) {
		rs := busy[svc]
		sort.Ints(rs)
		parts = append(parts, fmt.Sprintf("%s in %s (up to %.0f ms/s)", svc, roundList(rs), peak[svc]))
	}
	advice := "so warm up longer (load.variant_warmup, or until the JIT settles: load.variant_warmup_until) or restart less often"
	switch by {
	case warmupByToll:
		advice = "toll warmed each start until its JIT settled or the budget allowed no longer, and the interval carries the spread these rounds show"
	case warmupFresh:
		advice = freshAdvice
	}
	w := fmt.Sprintf("%s's JVM was still JIT-compiling under load at %s: %s; its costs there include warm-up; %s",
		variant, step, strings.Join(parts, ", "), advice)
	if compilersRead {
		w += `; "CPU per request without JIT" leaves the compiler threads' own CPU out`
	}
	return w
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

// freshAdvice is what a warning says of a service still warming up in a
// run that starts it afresh every round or trial on purpose.
const freshAdvice = "the scenario starts its services afresh every round (or trial), so that warming up is part of what it measures, and the interval carries the spread these rounds show"

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

// roundList writes rounds as "round 3" or "rounds 1, 2, 5".
func roundList(rs []int) string {
	if len(rs) == 1 {
		return fmt.Sprintf("round %d", rs[0])
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	return "rounds " + strings.Join(s, ", ")
}

// Warmup is how a variant's warm-ups with an end condition
// (load.variant_warmup_until) went over a run: one per start of its
// services.
type Warmup struct {
	Variant string `json:"variant"`
	// Count is its warm-ups; Settled those that ended because its JVMs
	// settled, before their maximum.
	Count   int `json:"count"`
	Settled int `json:"settled"`
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
func warmups(variants []string, trials []*record.Trial, until *record.WarmupUntil) ([]Warmup, []string) {
	byVariant := map[string]*Warmup{}
	var warnings []string
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
func warmupWarning(t *record.Trial, until *record.WarmupUntil) string {
	var rates []string
	for _, svc := range slices.Sorted(maps.Keys(t.VariantWarmup.JITMsPerS)) {
		rates = append(rates, fmt.Sprintf("%s %.1f ms/s", svc, t.VariantWarmup.JITMsPerS[svc]))
	}
	rule := ""
	if until != nil {
		rule = fmt.Sprintf(" (below %g ms/s over %g s)", until.JITBelowMs, until.OverS)
	}
	ended := fmt.Sprintf("reached its maximum of %g s", t.VariantWarmup.MaxS)
	if t.VariantWarmupS < t.VariantWarmup.MaxS-0.5 {
		ended = fmt.Sprintf("was cut short after %.0f s", t.VariantWarmupS)
	}
	advice := "raise load.variant_warmup"
	if until != nil && until.Auto {
		advice = "toll's warm-up stops there, and the interval carries what it left"
	}
	return fmt.Sprintf("%s's variant warm-up before trial %d (round %d) %s without its JIT settling%s, last compiling %s: that trial measures a JVM still warming up; %s",
		t.Variant, t.Index, t.Round, ended, rule, strings.Join(rates, ", "), advice)
}
