package analyze

import (
	"maps"
	"math"
	"slices"

	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/stats"
)

// QuickStartS is the start-up, in seconds, under which toll advises a load
// test that started its services once to restart them every round: the
// restarts then cost next to nothing.
const QuickStartS = 2.0

// restartOnceWarning advises restart: per-round when a load test of several
// rounds started each variant's services once and every service was ready
// within QuickStartS. A process started once for the whole run is one draw
// of what differs between two starts of the same program (its memory
// layout, its heap's sizing): that draw is in every round, so the costs it
// moves are compared over starts (compareStarts), which one start leaves
// without a verdict (docs/method.md, "Two starts of one program").
// Restarted every round, it varies between rounds and is inside the
// interval.
func restartOnceWarning(m *record.Manifest, trials []*record.Trial) (Warning, bool) {
	if m.Restart != "once" || !loadTest(m) || m.Mode == "find-max" || m.Rounds < 2 {
		return Warning{}, false
	}
	slowest := 0.0
	started := false
	for _, t := range trials {
		for _, sr := range t.Services {
			if !sr.Started {
				continue
			}
			if sr.Container != "" {
				return Warning{}, false // a container's start includes its engine's
			}
			started = true
			slowest = max(slowest, sr.StartupS)
		}
	}
	if !started || slowest >= QuickStartS {
		return Warning{}, false
	}
	// Precision mode starts again only services that run a JVM; the
	// report says what toll chose, not a setting to change.
	return warn(WarnRestartOnce, m.Starts, m.Precision != nil, slowest), true
}

// SliceTailShare is the most of a sliced duet's turn (load.slice) that a
// side's latency p99 may take before the report warns: a request still in
// flight when its side's turn ends runs into the other side's, and each
// side's tail then holds some of the other's load.
const SliceTailShare = 0.1

// sliceWarning warns when variant's latency p99 at step, the mean over its
// rounds, took more than SliceTailShare of the run's slice: its slowest
// requests outlived their turn.
func sliceWarning(m *record.Manifest, variant, step string, rounds map[int]*TrialCosts) (Warning, bool) {
	if m.Load.SliceS <= 0 {
		return Warning{}, false
	}
	var p99s []float64
	for _, r := range slices.Sorted(maps.Keys(rounds)) { // in order: the mean is an argument, to the last digit
		if x, ok := rounds[r].Costs[LatencyP99]; ok {
			p99s = append(p99s, x)
		}
	}
	if len(p99s) == 0 {
		return Warning{}, false
	}
	sliceMs, p99 := 1000*m.Load.SliceS, stats.Mean(p99s)
	if p99 <= SliceTailShare*sliceMs {
		return Warning{}, false
	}
	return warn(WarnSliceTail, variant, step, p99, sliceMs), true
}

// sharedCPUsBusyWarning warns when the services' CPUs, shared by sides
// loaded at once (a shared duet, or variants together), were more than
// SaturatedBusy percent busy in a trial's window: the sides then queued
// behind one another, and what each cost was measured at saturation (a
// JVM's compiler and GC threads starved, exporters batching more), not
// under its own load. A load test run one variant at a time may mean to
// saturate its services; one with every variant at once is made to.
func sharedCPUsBusyWarning(m *record.Manifest, tcs []*TrialCosts) (Warning, bool) {
	if !SharedDuet(m) {
		return Warning{}, false
	}
	cpus := parseCPUList(m.Layout.DuetCPUs[0])
	busy, peak := 0, 0.0
	n := 0
	for _, tc := range tcs {
		if tc.Excluded {
			continue
		}
		n++
		most := busiestOf(tc, cpus)
		if most > SaturatedBusy {
			busy++
		}
		peak = max(peak, most)
	}
	if busy == 0 {
		return Warning{}, false
	}
	return warn(WarnSharedCPUsBusy, m.Layout.DuetCPUs[0], SaturatedBusy, busy, n, peak), true
}

// busiestOf returns how busy the busiest of cpus was over tc's window, in
// percent, less what neighbours at idle priority ran there.
func busiestOf(tc *TrialCosts, cpus []int) float64 {
	most := 0.0
	for _, c := range cpus {
		most = max(most, tc.Costs[CPUBusy(c)]-tc.idleBusy[c])
	}
	return most
}

// jvmStarts returns how many times a load test that started its services
// once for the whole run (restart: once) started them (starts:, 1 by
// default) when it measured a JVM among them: each start of a variant's
// JVM is one draw of what its JIT made of the code, the same in every round
// of the start (JVMStartNoisePct). It returns 0 for any other run.
func jvmStarts(m *record.Manifest, trials []*TrialCosts) int {
	if m.Restart != "once" || !loadTest(m) || m.Mode == "find-max" {
		return 0
	}
	for _, tc := range trials {
		if _, ok := tc.Costs[Classes]; ok {
			return max(m.Starts, 1)
		}
	}
	return 0
}

// weightedStarts returns how many starts the means of the baseline's
// rounds counted average, each start weighed by its rounds (effectiveStarts), the
// least over load steps, at most starts.
func weightedStarts(trials []*TrialCosts, baseline string, starts int) float64 {
	byStep := map[int][]int{}
	for _, tc := range trials {
		if tc.Variant == baseline && !tc.Settling {
			byStep[tc.Step] = append(byStep[tc.Step], tc.Launch)
		}
	}
	k := float64(starts)
	for _, ls := range byStep {
		k = min(k, startCount(starts, ls))
	}
	return k
}

// jvmStartWarning says what a run whose JVMs started starts times carries
// in its CPU intervals, and why: the least change each resolves divides the
// start-to-start term among weighted starts, the starts as the rounds'
// means weigh them (weightedStarts).
//
// With chosen (precision mode), toll chose the starts, and the warning says
// so instead of asking for more.
func jvmStartWarning(pct map[Cost]float64, starts int, weighted float64, chosen bool) (Warning, bool) {
	if len(pct) == 0 {
		return Warning{}, false
	}
	// A change between two sides carries two starts' terms; more starts
	// divide them.
	per := math.Sqrt(max(weighted, 1))
	z := stats.ZQuantile()
	return warn(WarnJVMStarts, starts, chosen, pct[CPUPerRequest], pct[CPUNoJIT],
		z*math.Sqrt2*pct[CPUPerRequest]/per, z*math.Sqrt2*pct[CPUNoJIT]/per), true
}

// loadTest reports whether m's trials were load tests ("load", or absent
// in runs recorded before start-up and job experiments).
func loadTest(m *record.Manifest) bool { return m.Workload == "" || m.Workload == "load" }
