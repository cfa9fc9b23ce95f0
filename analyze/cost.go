package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tollperf/toll/probe/runtime"
)

// Cost identifies one figure toll reports per trial.
type Cost string

// The costs toll reports, in report order. A runtime's (JVMHeapUsed to
// JVMInit here) come from its metrics (package probe/runtime): these
// constants name those of the JVM that toll's own rules use.
const (
	CPUPerRequest  Cost = "cpu_per_request_ms"
	CPUNoJIT       Cost = "cpu_per_request_nojit_ms"
	CPUCores       Cost = "cpu_cores"
	InstrPerReq    Cost = "instructions_per_request"
	CyclesPerReq   Cost = "cycles_per_request"
	RSS            Cost = "rss_mib"
	Memory         Cost = "memory_mib"
	Threads        Cost = "threads"
	FDs            Cost = "fds"
	JVMHeapUsed    Cost = "jvm_heap_used_mib"
	JVMHeapCommit  Cost = "jvm_heap_committed_mib"
	JVMCommitted   Cost = "jvm_committed_mib"
	JVMOffHeap     Cost = "jvm_offheap_mib"
	Metaspace      Cost = "jvm_metaspace_mib"
	MetaCommitted  Cost = "jvm_metaspace_committed_mib"
	Classes        Cost = "jvm_classes_loaded"
	JVMThreads     Cost = "jvm_threads"
	GCTime         Cost = "jvm_gc_ms_per_s"
	GCCount        Cost = "jvm_gcs_per_min"
	JITTime        Cost = "jvm_jit_ms_per_s"
	JITCompiles    Cost = "jvm_jit_compiles_per_min"
	JITCPU         Cost = "jvm_jit_cpu_ms_per_s"
	JVMInit        Cost = "jvm_init_ms"
	LatencyMin     Cost = "latency_min_ms"
	LatencyMean    Cost = "latency_mean_ms"
	LatencyP50     Cost = "latency_p50_ms"
	LatencyP90     Cost = "latency_p90_ms"
	LatencyP95     Cost = "latency_p95_ms"
	LatencyP99     Cost = "latency_p99_ms"
	LatencyP999    Cost = "latency_p999_ms"
	LatencyMax     Cost = "latency_max_ms"
	Throughput     Cost = "throughput_rps"
	PeakThroughput Cost = "peak_throughput_rps"
	ErrorRate      Cost = "errors_pct"
	Spans          Cost = "spans_per_s"
	SpansPerReq    Cost = "spans_per_request"
	ExportBytes    Cost = "export_kib_per_s"
	Profiles       Cost = "profiles_per_s"
	Rejected       Cost = "rejected_per_s"
	RejectedBytes  Cost = "rejected_kib_per_s"
	Startup        Cost = "startup_ms"
	MachineCPU     Cost = "machine_cpu_pct"
	Steal          Cost = "machine_steal_pct"
	MachineMem     Cost = "machine_memory_pct"
)

// minStarts is the fewest pairs that give an interval to a cost measured
// once per start of the services (perStart).
const minStarts = 3

// perStart says whether c is measured once per start of the services
// (the JVM's init, the time to ready), not in every round: with restart:
// once its pairs are the run's starts.
func (c Cost) perStart() bool {
	m, ok := runtimeMetric(c)
	return c == Startup || ok && m.Kind == runtime.AtStart
}

// minRatioCount is the mean baseline below which a count (counted) is
// compared by its difference: a count of a few moves by whole units, and
// its ratio reads large (1 thread to 3 is +200%) where the difference,
// +2 threads, says what changed.
const minRatioCount = 10

// counted says whether c counts things (threads, open files), a whole
// number of them at each sample.
func (c Cost) counted() bool {
	m, ok := runtimeMetric(c)
	return c == Threads || c == FDs || ok && m.Whole
}

// fewStarts says why cost c, measured over n starts, gets no interval:
// "" when it may have one (it is not measured once per start, or n is at
// least minStarts).
func fewStarts(c Cost, n int) WhyCode {
	switch {
	case !c.perStart() || n >= minStarts:
		return ""
	case n == 1:
		return WhyOneStart
	default:
		return WhyFewStarts
	}
}

// CostInfo describes how a cost is shown and compared.
type CostInfo struct {
	Cost  Cost
	Label string
	Unit  string
	// Digits is the number of decimals shown.
	Digits int
	// Additive costs can be zero in a healthy run (errors, spans): they are
	// compared by paired differences instead of ratios.
	Additive bool
}

// Costs returns every cost in report order.
func Costs() []CostInfo {
	out := []CostInfo{
		{CPUPerRequest, "CPU per request", "ms", 3, false},
		{CPUNoJIT, "CPU per request without JIT", "ms", 3, false},
		{CPUCores, "CPU", "cores", 3, false},
		{InstrPerReq, "instructions per request", "", 0, false},
		{CyclesPerReq, "cycles per request", "", 0, false},
		{RSS, "RSS", "MiB", 1, false},
		{Memory, "memory (cgroup)", "MiB", 1, false},
		{Threads, "threads", "", 0, false},
		{FDs, "open files", "", 0, false},
	}
	out = append(out, runtimeCostInfos()...)
	return append(out, []CostInfo{
		{LatencyMin, "latency min", "ms", 2, false},
		{LatencyMean, "latency mean", "ms", 2, false},
		{LatencyP50, "latency p50", "ms", 2, false},
		{LatencyP90, "latency p90", "ms", 2, false},
		{LatencyP95, "latency p95", "ms", 2, false},
		{LatencyP99, "latency p99", "ms", 2, false},
		{LatencyP999, "latency p99.9", "ms", 2, false},
		{LatencyMax, "latency max", "ms", 2, false},
		{Throughput, "throughput", "req/s", 1, false},
		{PeakThroughput, "peak throughput (best second)", "req/s", 1, false},
		{ErrorRate, "errors", "%", 2, true},
		{Spans, "spans received", "/s", 1, true},
		{SpansPerReq, "spans per request", "", 2, true},
		{ExportBytes, "telemetry received", "KiB/s", 1, true},
		{Profiles, "profiles received", "/s", 2, true},
		{Rejected, "exports rejected", "/s", 2, true},
		{RejectedBytes, "telemetry rejected", "KiB/s", 1, true},
		{Startup, "startup", "ms", 0, false},
		{MachineCPU, "machine CPU (all cores)", "%", 1, true},
		{Steal, "machine steal", "%", 2, true},
		{MachineMem, "machine memory used", "%", 1, true},
	}...)
}

// CPUBusy is the cost of one CPU's busy share of the machine, in percent.
func CPUBusy(cpu int) Cost { return Cost(fmt.Sprintf("machine_cpu%d_pct", cpu)) }

// requestCostPrefix starts the costs of one entry of the request mix.
const requestCostPrefix = "request:"

// RequestCost is cost c (a latency percentile or the error rate) of the
// entry of the request mix named name, on its own.
func RequestCost(name string, c Cost) Cost {
	return Cost(requestCostPrefix + name + ":" + string(c))
}

// requestCostParts splits a RequestCost into the entry's name and the cost.
func requestCostParts(c Cost) (name string, base Cost, ok bool) {
	rest, ok := strings.CutPrefix(string(c), requestCostPrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return "", "", false
	}
	return rest[:i], Cost(rest[i+1:]), true
}

// perRequestCosts are the costs reported per entry of the request mix.
func perRequestCosts() []Cost {
	return []Cost{Throughput, LatencyMean, LatencyP50, LatencyP90, LatencyP99, ErrorRate}
}

// BetterLarger says whether more of c is better, as for throughput (of the
// whole mix, its best second, or one request of the mix): a change in it is
// a gain, not a cost.
func BetterLarger(c Cost) bool {
	if _, base, ok := requestCostParts(c); ok {
		c = base
	}
	return c == Throughput || c == PeakThroughput
}

// Info returns the description of c.
func Info(c Cost) CostInfo {
	for _, ci := range Costs() {
		if ci.Cost == c {
			return ci
		}
	}
	for _, ci := range workloadCosts() {
		if ci.Cost == c {
			return ci
		}
	}
	if ci, ok := logCostInfo(c); ok {
		return ci
	}
	if ci, ok := scrapeCostInfo(c); ok {
		return ci
	}
	if name, base, ok := requestCostParts(c); ok {
		ci := Info(base)
		ci.Cost, ci.Label = c, ci.Label+" ("+name+")"
		return ci
	}
	var cpu int
	if n, _ := fmt.Sscanf(string(c), "machine_cpu%d_pct", &cpu); n == 1 && string(CPUBusy(cpu)) == string(c) {
		return CostInfo{Cost: c, Label: fmt.Sprintf("machine CPU %d", cpu), Unit: "%", Digits: 1, Additive: true}
	}
	return CostInfo{Cost: c, Label: string(c), Digits: 2}
}

// costsOf returns every cost in report order: the fixed ones, then the
// per-CPU ones that any of the trials has. Each entry of a request mix of
// several has its own latency and error rows, after the overall error
// rate. Profiles are left out when no trial received any, and rejected
// exports when no trial's sink rejected any, so that a run without a
// profiler, or whose sinks took everything, has no rows of zeros for them.
func costsOf(trials []*TrialCosts) []CostInfo {
	var names []string
	for _, tc := range trials {
		for _, n := range tc.requests {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	var out []CostInfo
	for _, ci := range workloadCosts() {
		if slices.ContainsFunc(trials, func(tc *TrialCosts) bool { _, ok := tc.Costs[ci.Cost]; return ok }) {
			out = append(out, ci)
		}
	}
	var logs []Cost
	for _, tc := range trials {
		for c := range tc.Costs {
			if _, ok := logCostInfo(c); ok && !slices.Contains(logs, c) {
				logs = append(logs, c)
			}
		}
	}
	slices.Sort(logs)
	for _, c := range logs {
		out = append(out, Info(c))
	}
	var scraped []Cost
	for _, tc := range trials {
		for c := range tc.Costs {
			if _, ok := scrapeCostInfo(c); ok && !slices.Contains(scraped, c) {
				scraped = append(scraped, c)
			}
		}
	}
	slices.Sort(scraped)
	for _, ci := range Costs() {
		out = append(out, ci)
		if ci.Cost == MachineMem {
			for _, c := range scraped {
				out = append(out, Info(c))
			}
		}
		if ci.Cost == ErrorRate {
			for _, n := range names {
				for _, c := range perRequestCosts() {
					out = append(out, Info(RequestCost(n, c)))
				}
			}
		}
	}
	for _, c := range [][]Cost{{Profiles}, {Rejected, RejectedBytes}} {
		if !slices.ContainsFunc(trials, func(tc *TrialCosts) bool { return tc.Costs[c[0]] > 0 }) {
			out = slices.DeleteFunc(out, func(ci CostInfo) bool { return slices.Contains(c, ci.Cost) })
		}
	}
	maxCPU := -1
	for _, tc := range trials {
		for cpu := 0; ; cpu++ {
			if _, ok := tc.Costs[CPUBusy(cpu)]; !ok {
				break
			}
			maxCPU = max(maxCPU, cpu)
		}
	}
	for cpu := 0; cpu <= maxCPU; cpu++ {
		out = append(out, Info(CPUBusy(cpu)))
	}
	return out
}

// SplitRequestCost splits a RequestCost into the name of the request mix's
// entry and the cost; ok is false for any other cost.
func SplitRequestCost(c Cost) (name string, base Cost, ok bool) { return requestCostParts(c) }
