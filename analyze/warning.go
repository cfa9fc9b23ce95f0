package analyze

import (
	"encoding/json"
	"fmt"
)

// WarningCode names what a warning says. analyze decides that a run
// deserves a warning and with which names and numbers; report holds the
// words, one catalogue per language of output.
type WarningCode string

// The warnings of a run's summary, each with the Args its words use, in
// that order.
const (
	// WarnNote is a warning read back from a summary.json written before
	// warnings had codes, or an error's own text: Text holds it whole.
	WarnNote WarningCode = "note"
	// WarnTrialCutShort: a trial was cut short with nothing to analyse.
	// Args: trial index, variant, round, the first line of its error.
	WarnTrialCutShort WarningCode = "trial-cut-short"
	// WarnTrialUnanalysable: a trial could not be analysed. Args: the
	// error's text.
	WarnTrialUnanalysable WarningCode = "trial-unanalysable"
	// WarnWarmupUnsettled: a variant warm-up ended with a JVM still
	// compiling. Args: variant, trial index, round, whether it was cut
	// short, its maximum (s), its length (s), whether an end rule was set,
	// the rule's JIT rate (ms/s) and span (s), whether toll chose the rule,
	// the services' names and their last JIT rates (ms/s).
	WarnWarmupUnsettled WarningCode = "warmup-unsettled"
	// WarnControlMissing: no round of the A/A control to correct by.
	// Args: variant, step, the costs' labels.
	WarnControlMissing WarningCode = "control-missing"
	// WarnControlBias: the A/A control read a change of CPU per request.
	// Args: the control's change, its interval's half-width, their unit
	// ("%" for a ratio), the unit's digits, step. A summary written
	// before had two: the control's verdict in words, step.
	WarnControlBias WarningCode = "control-bias"
	// WarnStartSpread: costs differed between a run's starts more than the
	// start-to-start term allows. Args: variant, step, the costs' labels,
	// starts.
	WarnStartSpread WarningCode = "start-spread"
	// WarnBootstrapDisagrees: the bootstrap and t intervals disagree.
	// Args: variant, step, the costs' labels, whether toll chose the
	// rounds (precision mode).
	WarnBootstrapDisagrees WarningCode = "bootstrap-disagrees"
	// WarnJITUnderLoad: a JVM was still compiling under load. Args:
	// variant, step, who chose the warm-up (WarmupBy), whether the
	// compiler threads' CPU was read, then for each service its name, its
	// rounds and its peak JIT rate (ms/s).
	WarnJITUnderLoad WarningCode = "jit-under-load"
	// WarnSliceTail: a sliced duet's latency tail outlived its turns.
	// Args: variant, step, latency p99 (ms), the slice (ms).
	WarnSliceTail WarningCode = "slice-tail"
	// WarnNeighboursUneven: idle neighbours used the machine unevenly.
	// Args: variant, step, baseline, the baseline's neighbours, their
	// cores, as a percentage of the baseline's own CPU, the variant's
	// neighbours, their cores.
	WarnNeighboursUneven WarningCode = "neighbours-uneven"
	// WarnDriftPaired: a cost drifted but its ratio to the baseline did
	// not. Args: variant, cost label, whether it rose, |change| (%),
	// rounds, step, whether the variant is the baseline, the ratio's
	// change (%).
	WarnDriftPaired WarningCode = "drift-paired"
	// WarnDrift: a cost drifted over the rounds. Args: variant, cost
	// label, whether it rose, |change| (%), rounds, step, who chose the
	// warm-up (WarmupBy).
	WarnDrift WarningCode = "drift"
	// WarnRestartOnce: quick services started once for the whole run.
	// Args: starts, whether toll chose the schedule (precision mode), the
	// slowest start (s).
	WarnRestartOnce WarningCode = "restart-once"
	// WarnJVMStarts: what a run whose JVMs started few times carries in
	// its CPU intervals. Args: starts, whether toll chose them, the
	// start-to-start term of CPU per request and of it without the JIT
	// (%), and the least change each resolves (%).
	WarnJVMStarts WarningCode = "jvm-starts"
	// WarnSharedCPUsBusy: the CPUs shared by sides loaded at once were
	// saturated. Args: the CPUs, the limit (%), busy trials, trials, the
	// peak (%).
	WarnSharedCPUsBusy WarningCode = "shared-cpus-busy"
	// WarnSetupsDiffer: a measured service's runtime did not make the same
	// choice as it began in every trial (a JVM's garbage collector). Args:
	// the service, the choice's name ("gc"), then for each value its
	// value, the variants that ran it ([]string) and each one's start
	// ([]int, from 1; 0 for a run of one start).
	WarnSetupsDiffer WarningCode = "setups-differ"
	// WarnFewRounds: too few rounds for a useful interval. Args: variant,
	// rounds, whether they are a workload's repetitions, step, the least
	// for a useful interval, whether the budget ended the step before
	// toll's least of rounds, that least.
	WarnFewRounds WarningCode = "few-rounds"
)

// Who chose how a run's services were warmed, as a warning's argument.
const (
	WarmupByUser  = "user"
	WarmupByToll  = "toll"
	WarmupByFresh = "fresh"
)

// Warning is something about a run that a reader should know before
// trusting its figures: a code and the names and numbers it speaks of.
// Text is the warning in words: report fills it in when it writes
// summary.json, so that a reader of the JSON has them; a summary written
// before warnings had codes reads back each as a WarnNote with its Text.
type Warning struct {
	Code WarningCode `json:"code"`
	Args Args        `json:"args,omitempty"`
	Text string      `json:"text,omitempty"`
}

// warn returns the warning of code with args.
func warn(code WarningCode, args ...any) Warning { return Warning{Code: code, Args: args} }

// UnmarshalJSON decodes a warning, or the plain string of a summary
// written before warnings had codes.
func (w *Warning) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err == nil {
		*w = Warning{Code: WarnNote, Text: text}
		return nil
	}
	type plain Warning
	if err := json.Unmarshal(b, (*plain)(w)); err != nil {
		return fmt.Errorf("warning: %w", err)
	}
	return nil
}

// Args are a warning's names and numbers. Read back from JSON, a number
// is a float64 and a list a []any: the accessors take either form.
type Args []any

// Str returns argument i as a string.
func (a Args) Str(i int) string {
	s, _ := a.at(i).(string)
	return s
}

// Bool returns argument i as a bool.
func (a Args) Bool(i int) bool {
	b, _ := a.at(i).(bool)
	return b
}

// Float returns argument i as a number.
func (a Args) Float(i int) float64 { return number(a.at(i)) }

// Int returns argument i as a whole number.
func (a Args) Int(i int) int { return int(number(a.at(i))) }

// Strs returns argument i as a list of strings.
func (a Args) Strs(i int) []string {
	return listOf(a.at(i), func(v any) string { s, _ := v.(string); return s })
}

// Floats returns argument i as a list of numbers.
func (a Args) Floats(i int) []float64 { return listOf(a.at(i), number) }

// Ints returns argument i as a list of whole numbers.
func (a Args) Ints(i int) []int {
	return listOf(a.at(i), func(v any) int { return int(number(v)) })
}

// listOf returns x as a []T: itself, or each element of a list read back
// from JSON converted by conv.
func listOf[T any](x any, conv func(any) T) []T {
	switch v := x.(type) {
	case []T:
		return v
	case []any:
		out := make([]T, len(v))
		for j, e := range v {
			out[j] = conv(e)
		}
		return out
	}
	return nil
}

// at returns argument i, nil past the end.
func (a Args) at(i int) any {
	if i < 0 || i >= len(a) {
		return nil
	}
	return a[i]
}

// number returns x as a float64 whichever numeric type holds it.
func number(x any) float64 {
	switch v := x.(type) {
	case float64:
		return v
	case int:
		return float64(v)
	}
	return 0
}
