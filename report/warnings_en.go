package report

import (
	"fmt"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// The words of analyze's warnings in English, one case per code. Each
// case reads the warning's arguments in the order analyze's code names
// them (analyze.WarningCode); a new language of output is a file like
// this one.

// WarningText returns warning w in English: its words for its code and
// arguments, or its Text when it has no code of its own (a summary
// written before warnings had codes).
func WarningText(w analyze.Warning) string {
	a := w.Args
	switch w.Code {
	case analyze.WarnTrialCutShort:
		return fmt.Sprintf("trial %d (%s, round %d) was cut short with nothing to analyse: %s", a.Int(0), a.Str(1), a.Int(2), a.Str(3))
	case analyze.WarnTrialUnanalysable:
		return a.Str(0)
	case analyze.WarnWarmupUnsettled:
		return warmupUnsettledEN(a)
	case analyze.WarnControlMissing:
		return fmt.Sprintf("%s at %s: no round of the A/A control to correct %s by (fewer than 2 rounds with both); those changes are against the baseline alone",
			a.Str(0), a.Str(1), strings.Join(a.Strs(2), ", "))
	case analyze.WarnControlBias:
		return controlBiasEN(a)
	case analyze.WarnStartSpread:
		return fmt.Sprintf("%s at %s: %s differed between the run's %d starts more than toll's start-to-start term for a JVM allows (docs/method.md, \"Several starts in one run\"); those intervals carry the spread these starts showed",
			a.Str(0), a.Str(1), strings.Join(a.Strs(2), ", "), a.Int(3))
	case analyze.WarnBootstrapDisagrees:
		more := " (more rounds help)"
		if a.Bool(3) {
			more = ""
		}
		return fmt.Sprintf("%s at %s: the bootstrap and t intervals disagree for %s; treat those verdicts with care%s",
			a.Str(0), a.Str(1), strings.Join(a.Strs(2), ", "), more)
	case analyze.WarnJITUnderLoad:
		return jitUnderLoadEN(a)
	case analyze.WarnSliceTail:
		return fmt.Sprintf("%s at %s: latency p99 %.1f ms is more than a tenth of the %g ms turns the duet's sides took (load.slice): requests of one turn ran into the other side's, so the latency tails hold some of each other's load; a longer slice keeps them apart",
			a.Str(0), a.Str(1), a.Float(2), a.Float(3))
	case analyze.WarnNeighboursUneven:
		v, baseline := a.Str(0), a.Str(2)
		return fmt.Sprintf("%s at %s: while %s was measured, the idle services of %s used %.3f cores (%.0f%% of %s's own CPU); while %s was measured, those of %s used %.3f: "+
			"background work (exporters, timers, GC, JIT) that falls on the two sides unevenly in this schedule and may bias %s's latency and CPU; "+
			"restart: per-trial runs each variant alone (bench/gold.sh compares the two schedules)",
			v, a.Str(1), baseline, strings.Join(a.Strs(3), ", "), a.Float(4), a.Float(5), baseline, v, strings.Join(a.Strs(6), ", "), a.Float(7), v)
	case analyze.WarnDriftPaired:
		whose := "its ratio to the baseline, round by round, did not trend"
		if a.Bool(6) {
			whose = "no variant's ratio to it, round by round, trended"
		}
		return fmt.Sprintf("%s's %s %s %.0f%% over its %d rounds at %s, but %s (%+.1f%% over the run): the sides moved alike (the machine changed speed, or every side warmed up together), so the comparisons, paired within each round, hold; the levels are the run's average",
			a.Str(0), a.Str(1), roseEN(a.Bool(2)), a.Float(3), a.Int(4), a.Str(5), whose, a.Float(7))
	case analyze.WarnDrift:
		advice := "warm each variant up once after it starts (load.variant_warmup) or every trial longer (load.warmup), restart less often, or leave the first rounds out"
		switch a.Str(6) {
		case analyze.WarmupByToll:
			advice = "toll warmed each start once before measuring (a JVM until its JIT settled, within the budget; other runtimes briefly), and the interval carries the spread these rounds show"
		case analyze.WarmupByFresh:
			advice = freshAdviceEN
		}
		return fmt.Sprintf("%s's %s %s %.0f%% over its %d rounds at %s: it was still warming up (a JIT compiling, caches filling) or the machine drifted, so its comparison measures a moving target; %s",
			a.Str(0), a.Str(1), roseEN(a.Bool(2)), a.Float(3), a.Int(4), a.Str(5), advice)
	case analyze.WarnRestartOnce:
		return restartOnceEN(a)
	case analyze.WarnJVMStarts:
		return jvmStartsEN(a)
	case analyze.WarnSharedCPUsBusy:
		return fmt.Sprintf("the services' CPUs (%s), shared by the variants loaded at once, were more than %.0f%% busy in %d of %d trials (up to %.0f%%): the sides queued behind one another, and their costs were measured at saturation (a JVM's compiler and GC threads starved, exporters batching more), not under each one's load alone; lower the rate, or run fewer variants at once (mode: duet)",
			a.Str(0), a.Float(1), a.Int(2), a.Int(3), a.Float(4))
	case analyze.WarnSetupsDiffer:
		return setupsDifferEN(a)
	case analyze.WarnFewRounds:
		what := "complete round"
		if a.Bool(2) {
			what = "sound repetition"
		}
		if a.Int(1) != 1 {
			what += "s"
		}
		s := fmt.Sprintf("%s has %d %s at %s: at least 2 are needed for an interval, %d or more for a useful one", a.Str(0), a.Int(1), what, a.Str(3), a.Int(4))
		if a.Bool(5) {
			s += fmt.Sprintf("; the run's budget ended this step before toll's least of %d rounds: a longer budget gives it those (precision.budget, toll run --budget)", a.Int(6))
		}
		return s
	}
	return w.Text
}

// setupsDifferEN says which starts of a measured service's runtime made
// which choice as they began (analyze.WarnSetupsDiffer).
func setupsDifferEN(a analyze.Args) string {
	var groups []string
	for i := 2; i+2 < len(a); i += 3 {
		variants, starts := a.Strs(i+1), a.Ints(i+2)
		var who []string
		for j := 0; j < len(variants); {
			k, nums := j, []string{}
			for ; k < len(variants) && variants[k] == variants[j]; k++ {
				if k < len(starts) && starts[k] > 0 {
					nums = append(nums, fmt.Sprint(starts[k]))
				}
			}
			switch len(nums) {
			case 0:
				who = append(who, variants[j])
			case 1:
				who = append(who, fmt.Sprintf("%s (start %s)", variants[j], nums[0]))
			default:
				who = append(who, fmt.Sprintf("%s (starts %s)", variants[j], strings.Join(nums, ", ")))
			}
			j = k
		}
		groups = append(groups, fmt.Sprintf("%s in %s", a.Str(i), strings.Join(who, ", ")))
	}
	what, advice := a.Str(1), "give every start the same setting"
	if what == "gc" {
		what = "garbage collector"
		advice = "a JVM picks its collector by the CPUs and memory it sees as it begins, unless its command names one: name one (-XX:+UseSerialGC, -XX:+UseG1GC) in the service's command"
	}
	return fmt.Sprintf("%s did not run one %s throughout: %s. Where they differ, its CPU, memory and GC figures compare the %ss as well as the variants; %s",
		a.Str(0), what, strings.Join(groups, "; "), what, advice)
}

// freshAdviceEN is what a warning says of a service still warming up in a
// run that starts it afresh every round or trial on purpose.
const freshAdviceEN = "the scenario starts its services afresh every round (or trial), so that warming up is part of what it measures, and the interval carries the spread these rounds show"

// roseEN is the verb of a drift up or down.
func roseEN(rose bool) string {
	if rose {
		return "rose"
	}
	return "fell"
}

// roundListEN writes rounds as "round 3" or "rounds 1, 2, 5".
func roundListEN(rs []int) string {
	if len(rs) == 1 {
		return fmt.Sprintf("round %d", rs[0])
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	return "rounds " + strings.Join(s, ", ")
}

// warmupUnsettledEN words analyze.WarnWarmupUnsettled.
func warmupUnsettledEN(a analyze.Args) string {
	svcs, last := a.Strs(10), a.Floats(11)
	rates := make([]string, len(svcs))
	for i, svc := range svcs {
		rates[i] = fmt.Sprintf("%s %.1f ms/s", svc, last[i])
	}
	rule := ""
	if a.Bool(6) {
		rule = fmt.Sprintf(" (below %g ms/s over %g s)", a.Float(7), a.Float(8))
	}
	ended := fmt.Sprintf("reached its maximum of %g s", a.Float(4))
	if a.Bool(3) {
		ended = fmt.Sprintf("was cut short after %.0f s", a.Float(5))
	}
	advice := "raise load.variant_warmup"
	if a.Bool(9) {
		advice = "toll's warm-up stops there, and the interval carries what it left"
	}
	return fmt.Sprintf("%s's variant warm-up before trial %d (round %d) %s without its JIT settling%s, last compiling %s: that trial measures a JVM still warming up; %s",
		a.Str(0), a.Int(1), a.Int(2), ended, rule, strings.Join(rates, ", "), advice)
}

// jitUnderLoadEN words analyze.WarnJITUnderLoad.
func jitUnderLoadEN(a analyze.Args) string {
	var parts []string
	for i := 4; i+2 < len(a); i += 3 {
		parts = append(parts, fmt.Sprintf("%s in %s (up to %.0f ms/s)", a.Str(i), roundListEN(a.Ints(i+1)), a.Float(i+2)))
	}
	advice := "so warm up longer (load.variant_warmup, or until the JIT settles: load.variant_warmup_until) or restart less often"
	switch a.Str(2) {
	case analyze.WarmupByToll:
		advice = "toll warmed each start until its JIT settled or the budget allowed no longer, and the interval carries the spread these rounds show"
	case analyze.WarmupByFresh:
		advice = freshAdviceEN
	}
	w := fmt.Sprintf("%s's JVM was still JIT-compiling under load at %s: %s; its costs there include warm-up; %s",
		a.Str(0), a.Str(1), strings.Join(parts, ", "), advice)
	if a.Bool(3) {
		w += `; "CPU per request without JIT" leaves the compiler threads' own CPU out`
	}
	return w
}

// restartOnceEN words analyze.WarnRestartOnce.
func restartOnceEN(a analyze.Args) string {
	starts := a.Int(0)
	ran := "ran as one process for the whole run, so what differs between two starts of the same program (memory layout, heap sizing) is one draw for every round: memory, threads and open files have an estimate and no verdict"
	if starts > 1 {
		ran = fmt.Sprintf("started %d times, each start for a span of the rounds, so what differs between two starts of the same program (memory layout, heap sizing) is one draw for every round of a start: memory, threads and open files are compared over the %d starts", starts, starts)
	}
	if a.Bool(1) {
		return fmt.Sprintf("each variant's services %s (docs/method.md, \"Two starts of one program\")", ran)
	}
	return fmt.Sprintf("restart: once: each variant's services %s; "+
		"they were ready within %.2f s here, so restart: per-round would compare them round by round (docs/method.md, \"Two starts of one program\")", ran, a.Float(2))
}

// jvmStartsEN words analyze.WarnJVMStarts.
func jvmStartsEN(a analyze.Args) string {
	starts := a.Int(0)
	each, more := "each variant's JVMs ran as one process for the whole run", "run the scenario again to see another draw, or start them several times in one run (starts:, toll run --starts N)"
	if starts > 1 {
		each, more = fmt.Sprintf("each variant's JVMs started %d times, each start for a span of the rounds", starts), "more starts resolve smaller changes"
	}
	lead := "restart: once: "
	if a.Bool(1) {
		lead = "" // the schedule is the scenario's; the starts are toll's
		times := "once"
		if starts != 1 {
			times = fmt.Sprintf("%d times", starts)
		}
		more = "toll started them " + times + ", as many as the precision target needed or the budget allowed"
	}
	return fmt.Sprintf("%s%s, and two starts of the same JVM differ in CPU per request by what their JIT compiled (docs/method.md, \"Two starts of one JVM\"); "+
		"the CPU intervals carry it, %.1f%% per side and start (%.1f%% without the JIT's CPU), so changes smaller than about %.1f%% (%.1f%%) stay unresolved: %s",
		lead, each, a.Float(2), a.Float(3), a.Float(4), a.Float(5), more)
}

// warningTexts returns each of ws in words.
func warningTexts(ws []analyze.Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = WarningText(w)
	}
	return out
}

// controlBiasEN returns WarnControlBias's words: the control's change in
// percent or in its unit; a summary written before the warning held its
// numbers gives the change in words (its first argument a string).
func controlBiasEN(a analyze.Args) string {
	change, step := a.Str(0), a.Str(1)
	if len(a) == 0 || a.Str(0) == "" {
		r := analyze.Reading{Code: analyze.ReadChange, Estimate: a.Float(0), HalfWidth: a.Float(1), Unit: a.Str(2), Digits: a.Int(3), Ratio: a.Str(2) == "%"}
		change, step = readingEN(r), a.Str(4)
	}
	return fmt.Sprintf("the A/A control (a copy of the baseline) read %s CPU per request at %s: the method had a bias of about that size in this run, and every variant's change is corrected by the control's",
		change, step)
}
