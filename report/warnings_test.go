package report

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/tollperf/toll/analyze"
)

// warningCases are warnings with their words in English: the sentences
// analyze wrote for the same warnings before they had codes, so that a
// report reads as it did.
func warningCases() []struct {
	w    analyze.Warning
	want string
} {
	return []struct {
		w    analyze.Warning
		want string
	}{
		{analyze.Warning{Code: "jit-under-load", Args: analyze.Args{"otel", "10 req/s", "user", true, "app", []int{1, 3}, 70, "db", []int{3}, 30}}, "otel's JVM was still JIT-compiling under load at 10 req/s: app in rounds 1, 3 (up to 70 ms/s), db in round 3 (up to 30 ms/s); its costs there include warm-up; so warm up longer (load.variant_warmup, or until the JIT settles: load.variant_warmup_until) or restart less often; \"CPU per request without JIT\" leaves the compiler threads' own CPU out"},
		{analyze.Warning{Code: "jit-under-load", Args: analyze.Args{"otel", "10 req/s", "toll", false, "app", []int{2}, 50}}, "otel's JVM was still JIT-compiling under load at 10 req/s: app in round 2 (up to 50 ms/s); its costs there include warm-up; toll warmed each start until its JIT settled or the budget allowed no longer, and the interval carries the spread these rounds show"},
		{analyze.Warning{Code: "jit-under-load", Args: analyze.Args{"otel", "10 req/s", "fresh", false, "app", []int{2}, 50}}, "otel's JVM was still JIT-compiling under load at 10 req/s: app in round 2 (up to 50 ms/s); its costs there include warm-up; the scenario starts its services afresh every round (or trial), so that warming up is part of what it measures, and the interval carries the spread these rounds show"},
		{analyze.Warning{Code: "warmup-unsettled", Args: analyze.Args{"otel", 3, 2, false, 300, 300, true, 5, 10, false, []string{"app", "b"}, []float64{20, 3.25}}}, "otel's variant warm-up before trial 3 (round 2) reached its maximum of 300 s without its JIT settling (below 5 ms/s over 10 s), last compiling app 20.0 ms/s, b 3.2 ms/s: that trial measures a JVM still warming up; raise load.variant_warmup"},
		{analyze.Warning{Code: "warmup-unsettled", Args: analyze.Args{"otel", 3, 2, false, 300, 300, true, 5, 10, true, []string{"app", "b"}, []float64{20, 3.25}}}, "otel's variant warm-up before trial 3 (round 2) reached its maximum of 300 s without its JIT settling (below 5 ms/s over 10 s), last compiling app 20.0 ms/s, b 3.2 ms/s: that trial measures a JVM still warming up; toll's warm-up stops there, and the interval carries what it left"},
		{analyze.Warning{Code: "warmup-unsettled", Args: analyze.Args{"otel", 3, 2, true, 300, 100.4, false, 0, 0, false, []string{"app"}, []float64{20}}}, "otel's variant warm-up before trial 3 (round 2) was cut short after 100 s without its JIT settling, last compiling app 20.0 ms/s: that trial measures a JVM still warming up; raise load.variant_warmup"},
		{analyze.Warning{Code: "drift", Args: analyze.Args{"otel", "CPU per request", false, 30, 10, "10 req/s", "user"}}, "otel's CPU per request fell 30% over its 10 rounds at 10 req/s: it was still warming up (a JIT compiling, caches filling) or the machine drifted, so its comparison measures a moving target; warm each variant up once after it starts (load.variant_warmup) or every trial longer (load.warmup), restart less often, or leave the first rounds out"},
		{analyze.Warning{Code: "drift", Args: analyze.Args{"otel", "CPU per request", true, 30, 10, "10 req/s", "toll"}}, "otel's CPU per request rose 30% over its 10 rounds at 10 req/s: it was still warming up (a JIT compiling, caches filling) or the machine drifted, so its comparison measures a moving target; toll warmed each start once before measuring (a JVM until its JIT settled, within the budget; other runtimes briefly), and the interval carries the spread these rounds show"},
		{analyze.Warning{Code: "drift", Args: analyze.Args{"otel", "CPU per request", true, 30, 10, "10 req/s", "fresh"}}, "otel's CPU per request rose 30% over its 10 rounds at 10 req/s: it was still warming up (a JIT compiling, caches filling) or the machine drifted, so its comparison measures a moving target; the scenario starts its services afresh every round (or trial), so that warming up is part of what it measures, and the interval carries the spread these rounds show"},
		{analyze.Warning{Code: "drift-paired", Args: analyze.Args{"otel", "CPU per request", true, 30, 10, "10 req/s", false, 0.4}}, "otel's CPU per request rose 30% over its 10 rounds at 10 req/s, but its ratio to the baseline, round by round, did not trend (+0.4% over the run): the sides moved alike (the machine changed speed, or every side warmed up together), so the comparisons, paired within each round, hold; the levels are the run's average"},
		{analyze.Warning{Code: "drift-paired", Args: analyze.Args{"baseline", "CPU per request", false, 22, 10, "10 req/s", true, 0.4}}, "baseline's CPU per request fell 22% over its 10 rounds at 10 req/s, but no variant's ratio to it, round by round, trended (+0.4% over the run): the sides moved alike (the machine changed speed, or every side warmed up together), so the comparisons, paired within each round, hold; the levels are the run's average"},
		{analyze.Warning{Code: "jvm-starts", Args: analyze.Args{1, false, 3.5, 2.25, 9.701505037879432, 6.236681810065349}}, "restart: once: each variant's JVMs ran as one process for the whole run, and two starts of the same JVM differ in CPU per request by what their JIT compiled (docs/method.md, \"Two starts of one JVM\"); the CPU intervals carry it, 3.5% per side and start (2.2% without the JIT's CPU), so changes smaller than about 9.7% (6.2%) stay unresolved: run the scenario again to see another draw, or start them several times in one run (starts:, toll run --starts N)"},
		{analyze.Warning{Code: "jvm-starts", Args: analyze.Args{3, false, 3.5, 2.25, 5.601166545164201, 3.6007499218912717}}, "restart: once: each variant's JVMs started 3 times, each start for a span of the rounds, and two starts of the same JVM differ in CPU per request by what their JIT compiled (docs/method.md, \"Two starts of one JVM\"); the CPU intervals carry it, 3.5% per side and start (2.2% without the JIT's CPU), so changes smaller than about 5.6% (3.6%) stay unresolved: more starts resolve smaller changes"},
		{analyze.Warning{Code: "jvm-starts", Args: analyze.Args{1, true, 3.5, 2.25, 9.701505037879432, 6.236681810065349}}, "each variant's JVMs ran as one process for the whole run, and two starts of the same JVM differ in CPU per request by what their JIT compiled (docs/method.md, \"Two starts of one JVM\"); the CPU intervals carry it, 3.5% per side and start (2.2% without the JIT's CPU), so changes smaller than about 9.7% (6.2%) stay unresolved: toll started them once, as many as the precision target needed or the budget allowed"},
		{analyze.Warning{Code: "jvm-starts", Args: analyze.Args{4, true, 3.5, 2.25, 4.850752518939716, 3.1183409050326745}}, "each variant's JVMs started 4 times, each start for a span of the rounds, and two starts of the same JVM differ in CPU per request by what their JIT compiled (docs/method.md, \"Two starts of one JVM\"); the CPU intervals carry it, 3.5% per side and start (2.2% without the JIT's CPU), so changes smaller than about 4.9% (3.1%) stay unresolved: toll started them 4 times, as many as the precision target needed or the budget allowed"},
		{analyze.Warning{Code: "restart-once", Args: analyze.Args{0, false, 0.3}}, "restart: once: each variant's services ran as one process for the whole run, so what differs between two starts of the same program (memory layout, heap sizing) is one draw for every round: memory, threads and open files have an estimate and no verdict; they were ready within 0.30 s here, so restart: per-round would compare them round by round (docs/method.md, \"Two starts of one program\")"},
		{analyze.Warning{Code: "restart-once", Args: analyze.Args{3, false, 0.3}}, "restart: once: each variant's services started 3 times, each start for a span of the rounds, so what differs between two starts of the same program (memory layout, heap sizing) is one draw for every round of a start: memory, threads and open files are compared over the 3 starts; they were ready within 0.30 s here, so restart: per-round would compare them round by round (docs/method.md, \"Two starts of one program\")"},
		{analyze.Warning{Code: "restart-once", Args: analyze.Args{0, true, 0.3}}, "each variant's services ran as one process for the whole run, so what differs between two starts of the same program (memory layout, heap sizing) is one draw for every round: memory, threads and open files have an estimate and no verdict (docs/method.md, \"Two starts of one program\")"},
		{analyze.Warning{Code: "slice-tail", Args: analyze.Args{"otel", "300 req/s", 6.04, 50}}, "otel at 300 req/s: latency p99 6.0 ms is more than a tenth of the 50 ms turns the duet's sides took (load.slice): requests of one turn ran into the other side's, so the latency tails hold some of each other's load; a longer slice keeps them apart"},
		{analyze.Warning{Code: "shared-cpus-busy", Args: analyze.Args{"1", 90, 1, 2, 99.6}}, "the services' CPUs (1), shared by the variants loaded at once, were more than 90% busy in 1 of 2 trials (up to 100%): the sides queued behind one another, and their costs were measured at saturation (a JVM's compiler and GC threads starved, exporters batching more), not under each one's load alone; lower the rate, or run fewer variants at once (mode: duet)"},
		{analyze.Warning{Code: "neighbours-uneven", Args: analyze.Args{"agent", "300 req/s", "baseline", []string{"agent"}, 0.03, 15, []string{"baseline"}, 0.001}}, "agent at 300 req/s: while baseline was measured, the idle services of agent used 0.030 cores (15% of baseline's own CPU); while agent was measured, those of baseline used 0.001: background work (exporters, timers, GC, JIT) that falls on the two sides unevenly in this schedule and may bias agent's latency and CPU; restart: per-trial runs each variant alone (bench/gold.sh compares the two schedules)"},
		{analyze.Warning{Code: analyze.WarnTrialCutShort, Args: analyze.Args{6, "otel", 3, "load: run interrupted at 282ms: context canceled"}}, "trial 6 (otel, round 3) was cut short with nothing to analyse: load: run interrupted at 282ms: context canceled"},
		{analyze.Warning{Code: analyze.WarnTrialUnanalysable, Args: analyze.Args{"trial 4: no samples in its window"}}, "trial 4: no samples in its window"},
		{analyze.Warning{Code: analyze.WarnControlMissing, Args: analyze.Args{"otel", "300 req/s", []string{"RSS (MiB)", "threads"}}}, "otel at 300 req/s: no round of the A/A control to correct RSS (MiB), threads by (fewer than 2 rounds with both); those changes are against the baseline alone"},
		{analyze.Warning{Code: analyze.WarnControlBias, Args: analyze.Args{"+2.1% ± 0.9%", "300 req/s"}}, "the A/A control (a copy of the baseline) read +2.1% ± 0.9% CPU per request at 300 req/s: the method had a bias of about that size in this run, and every variant's change is corrected by the control's"},
		{analyze.Warning{Code: analyze.WarnStartSpread, Args: analyze.Args{"otel", "300 req/s", []string{"RSS (MiB)"}, 4}}, "otel at 300 req/s: RSS (MiB) differed between the run's 4 starts more than toll's start-to-start term for a JVM allows (docs/method.md, \"Several starts in one run\"); those intervals carry the spread these starts showed"},
		{analyze.Warning{Code: analyze.WarnBootstrapDisagrees, Args: analyze.Args{"otel", "300 req/s", []string{"threads", "open files"}, false}}, "otel at 300 req/s: the bootstrap and t intervals disagree for threads, open files; treat those verdicts with care (more rounds help)"},
		{analyze.Warning{Code: analyze.WarnBootstrapDisagrees, Args: analyze.Args{"otel", "300 req/s", []string{"threads"}, true}}, "otel at 300 req/s: the bootstrap and t intervals disagree for threads; treat those verdicts with care"},
		{analyze.Warning{Code: analyze.WarnFewRounds, Args: analyze.Args{"otel", 1, false, "300 req/s", 5, false, 0}}, "otel has 1 complete round at 300 req/s: at least 2 are needed for an interval, 5 or more for a useful one"},
		{analyze.Warning{Code: analyze.WarnFewRounds, Args: analyze.Args{"otel", 3, true, "startup", 5, true, 8}}, "otel has 3 sound repetitions at startup: at least 2 are needed for an interval, 5 or more for a useful one; the run's budget ended this step before toll's least of 8 rounds: a longer budget gives it those (precision.budget, toll run --budget)"},
		{analyze.Warning{Code: analyze.WarnSetupsDiffer, Args: analyze.Args{"consumer", "gc", "G1", []string{"agent", "baseline", "baseline"}, []int{2, 2, 3}, "Serial", []string{"agent", "baseline"}, []int{1, 1}}}, "consumer did not run one garbage collector throughout: G1 in agent (start 2), baseline (starts 2, 3); Serial in agent (start 1), baseline (start 1). Where they differ, its CPU, memory and GC figures compare the garbage collectors as well as the variants; a JVM picks its collector by the CPUs and memory it sees as it begins, unless its command names one: name one (-XX:+UseSerialGC, -XX:+UseG1GC) in the service's command"},
		{analyze.Warning{Code: analyze.WarnSetupsDiffer, Args: analyze.Args{"app", "gc", "Parallel", []string{"agent"}, []int{0}, "Serial", []string{"baseline"}, []int{0}}}, "app did not run one garbage collector throughout: Parallel in agent; Serial in baseline. Where they differ, its CPU, memory and GC figures compare the garbage collectors as well as the variants; a JVM picks its collector by the CPUs and memory it sees as it begins, unless its command names one: name one (-XX:+UseSerialGC, -XX:+UseG1GC) in the service's command"},
		{analyze.Warning{Code: analyze.WarnNote, Text: "a warning written before warnings had codes"}, "a warning written before warnings had codes"},
	}
}

// TestWarningText checks each warning's words, and that they are the same
// when the warning is read back from summary.json, its numbers decoded as
// JSON's.
func TestWarningText(t *testing.T) {
	for _, tt := range warningCases() {
		if got := WarningText(tt.w); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.w.Code, got, tt.want)
		}
		b, err := json.Marshal(tt.w)
		if err != nil {
			t.Fatal(err)
		}
		var back analyze.Warning
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if got := WarningText(back); got != tt.want {
			t.Errorf("%s read back:\n got %q\nwant %q", tt.w.Code, got, tt.want)
		}
	}
}

// TestWarningReadBackFromText checks that a summary.json written when
// warnings were plain strings reads back with each string whole, and that
// a coded warning renders from its code.
func TestWarningReadBackFromText(t *testing.T) {
	var ws []analyze.Warning
	if err := json.Unmarshal([]byte(`["one", {"code": "slice-tail", "args": ["otel", "300 req/s", 6.04, 50], "text": "two"}]`), &ws); err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || WarningText(ws[0]) != "one" || ws[1].Code != analyze.WarnSliceTail {
		t.Fatalf("read back %+v", ws)
	}
	if got := WarningText(ws[1]); !regexp.MustCompile(`^otel at 300 req/s: latency p99 6\.0 ms`).MatchString(got) {
		t.Errorf("a coded warning renders from its code, not its stored text: %q", got)
	}
}

// TestPrecisionWarningsNameNoSetting checks that in precision mode the
// warnings about what toll chooses (warm-up, starts, rounds) say what toll
// did, and that with a fixed design they still name the setting.
func TestPrecisionWarningsNameNoSetting(t *testing.T) {
	// The scenario settings and flags a warning may tell the user to
	// change.
	settingNamed := regexp.MustCompile(`load\.variant_warmup|load\.warmup|starts:|--starts|restart:|restart less|more rounds|raise `)
	w := func(code analyze.WarningCode, args ...any) string {
		return WarningText(analyze.Warning{Code: code, Args: args})
	}
	jit := func(by string) string {
		return w(analyze.WarnJITUnderLoad, "otel", "10 req/s", by, false, "app", []int{1}, 50.0)
	}
	drift := func(by string) string {
		return w(analyze.WarnDrift, "otel", "CPU per request", false, 30.0, 10, "10 req/s", by)
	}
	warmup := func(auto bool) string {
		return w(analyze.WarnWarmupUnsettled, "otel", 3, 2, false, 300.0, 300.0, true, 5.0, 10.0, auto, []string{"app"}, []float64{20})
	}
	for _, tt := range []struct {
		name          string
		fixed, chosen string
	}{
		{"JIT compiling under load", jit(analyze.WarmupByUser), jit(analyze.WarmupByToll)},
		{"JIT compiling under load, restarted every round", jit(analyze.WarmupByUser), jit(analyze.WarmupByFresh)},
		{"warm-up unsettled", warmup(false), warmup(true)},
		{"drift", drift(analyze.WarmupByUser), drift(analyze.WarmupByToll)},
		{"drift, restarted every round", drift(analyze.WarmupByUser), drift(analyze.WarmupByFresh)},
		{"JVM started once", w(analyze.WarnJVMStarts, 1, false, 3.5, 2.25, 9.7, 6.2), w(analyze.WarnJVMStarts, 3, true, 3.5, 2.25, 5.6, 3.6)},
		{"services started once", w(analyze.WarnRestartOnce, 0, false, 0.3), w(analyze.WarnRestartOnce, 0, true, 0.3)},
		{"bootstrap disagrees", w(analyze.WarnBootstrapDisagrees, "otel", "1 req/s", []string{"RSS"}, false), w(analyze.WarnBootstrapDisagrees, "otel", "1 req/s", []string{"RSS"}, true)},
	} {
		if !settingNamed.MatchString(tt.fixed) {
			t.Errorf("%s, fixed design: names no setting: %s", tt.name, tt.fixed)
		}
		if tt.chosen == "" || settingNamed.MatchString(tt.chosen) {
			t.Errorf("%s, precision mode: %q", tt.name, tt.chosen)
		}
	}
}
