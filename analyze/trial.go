package analyze

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/tollperf/toll/record"
)

// TrialCosts are one trial's figures over its analysis window.
type TrialCosts struct {
	Index int `json:"index"`
	Round int `json:"round"`
	// Launch numbers the start of the services the trial ran under, from
	// 0, in a run that started them several times (record.Trial.Launch).
	Launch  int    `json:"launch,omitempty"`
	Step    int    `json:"step"`
	Variant string `json:"variant"`
	// Pair names the variant a baseline trial ran beside (mode: duet).
	Pair   string           `json:"pair,omitempty"`
	Window Window           `json:"-"`
	Costs  map[Cost]float64 `json:"costs"`
	// Services holds the costs of each measured service on its own.
	Services map[string]map[Cost]float64 `json:"services,omitempty"`
	Flags    []Flag                      `json:"flags,omitempty"`
	// Excluded is set when the trial was left out of the comparisons (it
	// was cut short, or flagged with ExcludeFlagged).
	Excluded bool `json:"excluded,omitempty"`
	// Settling is set when the trial was left out of the comparisons as
	// one of its start's leading rounds, its JVMs still compiling what the
	// warm-up left them (Summary.Settling).
	Settling bool `json:"settling,omitempty"`
	// BesideWarmupStart is set when the trial's round began beside the
	// first load of a warm-up of starts ahead of their turn
	// (record.Trial.BesideWarmupStart), and was left out of the
	// comparisons (Summary.WarmupStarts).
	BesideWarmupStart bool `json:"beside_warmup_start,omitempty"`
	// Seconds are the whole seconds of the measured window, each with the
	// load's and the measured services' figures (series.csv).
	Seconds []Second `json:"seconds,omitempty"`
	// LatenessP99US is the p99 of how late the load generator sent the
	// trial's requests after their due time, in µs (open model).
	LatenessP99US int64 `json:"lateness_p99_us,omitempty"`
	// NeighbourCores is the CPU, in cores, that other variants' idle
	// services used during the trial's window (restart: once); absent when
	// none ran beside it.
	NeighbourCores *float64 `json:"neighbour_cores,omitempty"`

	neighbours []string  // the idle variants beside the trial
	saturated  []cpuBusy // CPUs outside the services' that were saturated
	// idleBusy is the busy share (percent) of each CPU that neighbours at
	// idle priority took (idleNeighbourBusy), by CPU.
	idleBusy map[int]float64
	requests []string // the request mix's entries with costs of their own
	// cycleRequests is how many requests the telemetry of the trial's
	// cycle was counted over (attributeTelemetry); 0 when it was not.
	cycleRequests float64
	// telemetryLeftOut is set when attributeTelemetry left the trial's
	// telemetry out (its cycle began with a warm-up at another load).
	telemetryLeftOut bool
}

// requestCosts adds each request-mix entry's own latency and error costs,
// over the whole measured window (per-entry figures are not kept per
// second, so trims do not apply to them). A mix of one entry has none: its
// figures are the trial's.
func requestCosts(tc *TrialCosts, reqs []record.RequestTotals, secs float64) error {
	if len(reqs) < 2 {
		return nil
	}
	for _, rq := range reqs {
		tc.requests = append(tc.requests, rq.Name)
		// A request's totals cover the whole measured window: trims do
		// not apply to them.
		if secs > 0 {
			tc.Costs[RequestCost(rq.Name, Throughput)] = float64(rq.Completed) / secs
		}
		if rq.Completed > 0 {
			tc.Costs[RequestCost(rq.Name, ErrorRate)] = 100 * float64(rq.Errors.Total()) / float64(rq.Completed)
		}
		if rq.Histogram == "" {
			continue
		}
		h, err := decodeLatency(rq.Histogram)
		if err != nil {
			return fmt.Errorf("decode latency histogram of request %s: %w", rq.Name, err)
		}
		if h.TotalCount() > 0 {
			tc.Costs[RequestCost(rq.Name, LatencyMean)] = h.Mean() / 1000
			tc.Costs[RequestCost(rq.Name, LatencyP50)] = float64(h.ValueAtQuantile(50)) / 1000
			tc.Costs[RequestCost(rq.Name, LatencyP90)] = float64(h.ValueAtQuantile(90)) / 1000
			tc.Costs[RequestCost(rq.Name, LatencyP99)] = float64(h.ValueAtQuantile(99)) / 1000
		}
	}
	return nil
}

// cpuBusy is one CPU's busy share over a window, in percent.
type cpuBusy struct {
	cpu  int
	busy float64
}

// SummarizeTrial computes t's costs over its analysis window, and its
// whole seconds' figures (TrialCosts.Seconds).
func SummarizeTrial(t *record.Trial, trim Trim) (*TrialCosts, error) {
	return summarizeTrial(t, trim, true)
}

// summarizeTrial is SummarizeTrial, its seconds' figures left out unless
// seconds is set: only a report shows them, and reading each second's
// latency costs more than the rest of the trial's costs together.
func summarizeTrial(t *record.Trial, trim Trim, seconds bool) (*TrialCosts, error) {
	if tc, ok := summarizeWorkload(t); ok {
		return tc, nil // a start or a job: no window, no load
	}
	w := WindowOf(t, trim)
	tc := &TrialCosts{Index: t.Index, Round: t.Round, Launch: t.Launch, Step: t.Step, Variant: t.Variant, Pair: t.Pair, Window: w,
		Costs: map[Cost]float64{}, Services: map[string]map[Cost]float64{}, LatenessP99US: t.Load.LatenessP99US,
		BesideWarmupStart: t.BesideWarmupStart}
	tc.idleBusy = idleNeighbourBusy(t)
	if c, ok := neighbourCores(t); ok {
		tc.NeighbourCores = &c
		for _, n := range t.Neighbours {
			tc.neighbours = append(tc.neighbours, n.Variant)
		}
	}
	if w.Length() <= 0 {
		return tc, fmt.Errorf("trial %d: the analysis window is empty (window %.1fs, trims %.1fs + %.1fs)", t.Index, t.Window().Seconds(), trim.Start, trim.End)
	}

	// Load: requests whose intended send time falls in the window.
	var sched, completed, ok, sent, peak uint64
	var errs record.ErrorCounts
	for _, iv := range t.Intervals {
		if !w.holdsInterval(iv.T) {
			continue
		}
		sched += iv.Scheduled
		sent += iv.Sent
		completed += iv.Completed
		peak = max(peak, iv.Completed) // intervals are one second long
		ok += iv.OK
		errs = errs.Add(iv.Errors)
	}
	// A window cut short ends inside its last interval, whose requests
	// are not counted: every rate is over the whole intervals counted.
	if _, end := t.Achieved(w.From, w.To); end < w.To {
		w.To = end
		tc.Window = w
	}
	// Rates are per second of the trial's own load: in a sliced duet it
	// ran in half of the window.
	secs := w.Length() * t.Share()
	if !t.Idle { // an idle step sent nothing: its per-request costs are absent
		tc.Costs[Throughput] = float64(completed) / secs
	}
	if peak > 0 {
		tc.Costs[PeakThroughput] = float64(peak) / t.Share()
	}
	if completed > 0 {
		tc.Costs[ErrorRate] = 100 * float64(errs.Total()) / float64(completed)
	}
	// A histogram that cannot be read leaves the trial's latency out, and
	// says so in a flag; its other costs stand.
	h, latErr := mergeHistograms(t.Intervals, w)
	if latErr == nil && h != nil && h.TotalCount() > 0 {
		ms := func(q float64) float64 { return float64(h.ValueAtQuantile(q)) / 1000 }
		tc.Costs[LatencyMin] = float64(h.Min()) / 1000
		tc.Costs[LatencyMean] = h.Mean() / 1000
		tc.Costs[LatencyP50] = ms(50)
		tc.Costs[LatencyP90] = ms(90)
		tc.Costs[LatencyP95] = ms(95)
		tc.Costs[LatencyP99] = ms(99)
		tc.Costs[LatencyP999] = ms(99.9)
		tc.Costs[LatencyMax] = float64(h.Max()) / 1000
	}
	if err := requestCosts(tc, t.Load.Requests, t.Window().Seconds()*t.Share()); err != nil {
		return tc, fmt.Errorf("trial %d: %w", t.Index, err)
	}

	// Services: CPU, memory, threads of every measured service, and their sum.
	measured := addServiceCosts(t, w, secs, completed, tc)
	// A service's own metrics (scrape:) are its costs whether or not its
	// other costs are measured.
	for _, series := range t.Samples {
		sc := scrapeCosts(series)
		if len(sc) == 0 {
			continue
		}
		if measured[series.Service] {
			if tc.Services[series.Service] == nil {
				tc.Services[series.Service] = map[Cost]float64{}
			}
			maps.Copy(tc.Services[series.Service], sc)
		}
		for c, v := range sc {
			tc.Costs[c] += v
		}
	}

	telemetryCosts(t, w, secs, tc)
	if s, ok := timeToPeak(t, w); ok {
		tc.Costs[TimeToPeak] = s
	}
	machineCosts(t, w, tc)
	if seconds {
		tc.Seconds = trialSeconds(t)
	}
	tc.Flags = flagTrial(t, tc, sched, sent)
	if latErr != nil {
		tc.Flags = append(tc.Flags, Flag{Trial: t.Index, Variant: t.Variant, Round: t.Round, Code: FlagLatencyUnreadable,
			Args: Args{latErr.Error()}})
	}
	return tc, nil
}

// serviceCosts computes one service's costs over w, its rates over secs of
// load (w's length, or the part of it the trial's load ran in).
func serviceCosts(s record.ServiceSeries, w Window, secs float64, completed uint64) map[Cost]float64 {
	n := len(s.Points)
	ts := make([]float64, n)
	cpu := make([]float64, n)
	for i, p := range s.Points {
		ts[i], cpu[i] = p.T, p.CPU
	}
	out := map[Cost]float64{}
	used := w.rise(ts, cpu)
	out[CPUCores] = used / secs
	if completed > 0 {
		out[CPUPerRequest] = 1000 * used / float64(completed)
	}
	var rss, mem, threads, fds float64
	var k, km float64
	for _, p := range s.Points {
		if p.T < w.From-1e-9 || p.T > w.To+1e-9 {
			continue
		}
		k++
		rss += float64(p.RSS)
		threads += float64(p.Threads)
		fds += float64(p.FDs)
		if p.Memory > 0 {
			km++
			mem += float64(p.Memory)
		}
	}
	if k > 0 {
		out[RSS] = rss / k / (1 << 20)
		out[Threads] = threads / k
		out[FDs] = fds / k
	}
	if km > 0 {
		out[Memory] = mem / km / (1 << 20)
	}
	runtimeCosts(s, w, out)
	jitCPU(s, w, secs, completed, out)
	if n := s.NMT; n != nil && n.Committed > 0 {
		// One reading, at the trial's end: the JVM's committed memory is a
		// level that moves slowly, not a rate.
		out[JVMCommitted] = float64(n.Committed) / (1 << 20)
		out[JVMOffHeap] = float64(n.Committed-min(n.Committed, n.HeapCommitted)) / (1 << 20)
	}
	hardwareCosts(s, w, completed, out)
	return out
}

// addServiceCosts adds the costs of t's measured services over w, each on
// its own and summed, with their CPU per request (secs: the seconds of
// the trial's own load; completed: its requests), and returns which
// services are measured.
func addServiceCosts(t *record.Trial, w Window, secs float64, completed uint64, tc *TrialCosts) map[string]bool {
	measured := map[string]bool{}
	startedHere := map[string]bool{}
	var startup float64
	var started bool
	for _, s := range t.Services {
		if s.Measured {
			measured[s.Name] = true
			startedHere[s.Name] = s.Started
			if s.Started {
				startup += s.StartupS
				started = true
			}
		}
	}
	var cpu, jit float64
	haveCPU, haveJIT := false, false
	for _, series := range t.Samples {
		if !measured[series.Service] || len(series.Points) == 0 {
			continue
		}
		sc := serviceCosts(series, w, secs, completed)
		if !startedHere[series.Service] {
			// A runtime's start-up (the JVM's init) belongs to the trial
			// it started for; with restart: once, later trials would
			// repeat the one figure and give it an interval of nothing.
			maps.DeleteFunc(sc, func(c Cost, _ float64) bool { return c.perStart() })
		}
		tc.Services[series.Service] = sc
		for c, v := range sc {
			if c == CPUPerRequest || c == CPUNoJIT {
				continue
			}
			tc.Costs[c] += v
		}
		cpu += sc[CPUCores] * secs
		haveCPU = true
		if ms, ok := sc[JITCPU]; ok {
			jit += ms / 1000 * secs
			haveJIT = true
		}
	}
	if haveCPU && completed > 0 {
		tc.Costs[CPUPerRequest] = 1000 * cpu / float64(completed)
		if haveJIT {
			// Every measured service's CPU but its JVM's compiler threads':
			// a JIT still compiling is a warm-up that ends, in bursts that
			// land in some rounds and not others (docs/method.md, "A JVM
			// still compiling"); its own row has it.
			tc.Costs[CPUNoJIT] = 1000 * max(cpu-jit, 0) / float64(completed)
		}
	}
	if started {
		tc.Costs[Startup] = 1000 * startup
	}
	return measured
}

// telemetryCosts adds what toll's sink received over w, per second of the
// trial's own load (secs).
func telemetryCosts(t *record.Trial, w Window, secs float64, tc *TrialCosts) {
	// Telemetry received by toll's sink. Spans, bytes and rejects are
	// attributed over the trial's cycle later (attributeTelemetry);
	// profiles are uploaded on a timer, not per request, so their rate over
	// the window stands. Telemetry received is the bytes of the requests
	// the sink accepted: those it rejected are counted apart.
	if len(t.Telemetry) == 0 {
		return
	}
	n := len(t.Telemetry)
	ts, spans, bytes := make([]float64, n), make([]float64, n), make([]float64, n)
	profiles, rejected, rejectedBytes := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, s := range t.Telemetry {
		ts[i], spans[i], bytes[i], profiles[i] = s.T, float64(s.Spans), float64(acceptedBytes(s)), float64(s.Profiles)
		rejected[i], rejectedBytes[i] = float64(s.Rejected), float64(s.RejectedBytes)
	}
	over := func(v []float64) float64 { return w.rise(ts, v) / secs }
	tc.Costs[Spans] = over(spans)
	tc.Costs[ExportBytes] = over(bytes) / 1024
	tc.Costs[Profiles] = over(profiles)
	tc.Costs[Rejected] = over(rejected)
	tc.Costs[RejectedBytes] = over(rejectedBytes) / 1024
	if tp := tc.Costs[Throughput]; tp > 0 {
		tc.Costs[SpansPerReq] = tc.Costs[Spans] / tp
	}
}

// hardwareCosts adds instructions and cycles per request over w, where the
// samples carry them.
func hardwareCosts(s record.ServiceSeries, w Window, completed uint64, out map[Cost]float64) {
	if completed == 0 || len(s.Points) < 2 || s.Points[len(s.Points)-1].Instructions == 0 {
		return
	}
	ts := make([]float64, len(s.Points))
	ins := make([]float64, len(s.Points))
	cyc := make([]float64, len(s.Points))
	for i, p := range s.Points {
		ts[i], ins[i], cyc[i] = p.T, float64(p.Instructions), float64(p.Cycles)
	}
	out[InstrPerReq] = w.rise(ts, ins) / float64(completed)
	out[CyclesPerReq] = w.rise(ts, cyc) / float64(completed)
}

// jitCPU adds the CPU of the JVM's JIT compiler threads over w, per second
// of load (secs), and the service's CPU per request without it, where the
// samples carry it.
func jitCPU(s record.ServiceSeries, w Window, secs float64, completed uint64, out map[Cost]float64) {
	var ts, jit []float64
	for _, p := range s.Points {
		if j := p.Runtime("jvm"); j != nil && j.Values["jit_cpu"] > 0 {
			ts = append(ts, p.T)
			jit = append(jit, j.Values["jit_cpu"])
		}
	}
	if len(ts) < 2 || secs <= 0 {
		return
	}
	used := w.rise(ts, jit)
	out[JITCPU] = 1000 * used / secs
	if completed > 0 {
		out[CPUNoJIT] = 1000 * max(out[CPUCores]*secs-used, 0) / float64(completed)
	}
}

// machineCosts adds the machine's CPU, steal and memory over w, and notes
// the CPUs outside the measured services' that were saturated.
func machineCosts(t *record.Trial, w Window, tc *TrialCosts) {
	ms := t.Machine
	if len(ms) < 2 {
		return
	}
	n := len(ms)
	ts := make([]float64, n)
	at := func(get func(record.MachineSample) float64) float64 {
		vs := make([]float64, n)
		for i, m := range ms {
			ts[i], vs[i] = m.T, get(m)
		}
		return w.rise(ts, vs)
	}
	// Busy shares are 1 − idle / elapsed time, not busy / (busy + idle):
	// a tickless kernel measures idle time exactly but charges busy time
	// by the timer tick, and work that wakes in step with the tick (a load
	// released on a 2 ms grid, a service answering in 300 µs) falls between
	// ticks, so that a CPU can read nearly idle by its ticks while its
	// cgroups charge it a good share of a core (docs/method.md, "What is
	// measured").
	elapsed := w.To - w.From
	if elapsed <= 0 || len(ms[0].PerCPUTotal) == 0 {
		return
	}
	idle := func(total, busy func(record.MachineSample) float64) float64 {
		return at(total) - at(busy)
	}
	busyShare := func(total, busy func(record.MachineSample) float64, cpus float64) float64 {
		return 100 * min(max(1-idle(total, busy)/(elapsed*cpus), 0), 1)
	}
	// CPUs that accounted no time were offline.
	var ncpu float64
	for cpu := range ms[0].PerCPUTotal {
		if at(func(m record.MachineSample) float64 { return at0(m.PerCPUTotal, cpu) }) > 0 {
			ncpu++
		}
	}
	if ncpu == 0 {
		return
	}
	tc.Costs[MachineCPU] = busyShare(func(m record.MachineSample) float64 { return m.Total }, func(m record.MachineSample) float64 { return m.Busy }, ncpu)
	tc.Costs[Steal] = 100 * min(max(at(func(m record.MachineSample) float64 { return m.Steal })/(elapsed*ncpu), 0), 1)
	perCPU := func(cpu int) float64 {
		if at(func(m record.MachineSample) float64 { return at0(m.PerCPUTotal, cpu) }) <= 0 {
			return 0 // offline
		}
		return busyShare(func(m record.MachineSample) float64 { return at0(m.PerCPUTotal, cpu) }, func(m record.MachineSample) float64 { return at0(m.PerCPUBusy, cpu) }, 1)
	}
	var mem, k float64
	for _, m := range ms {
		if m.T >= w.From-1e-9 && m.T <= w.To+1e-9 {
			mem += m.MemUsed
			k++
		}
	}
	if k > 0 {
		tc.Costs[MachineMem] = 100 * mem / k
	}
	for cpu := range ms[0].PerCPUTotal {
		if at(func(m record.MachineSample) float64 { return at0(m.PerCPUTotal, cpu) }) > 0 {
			tc.Costs[CPUBusy(cpu)] = perCPU(cpu)
		}
	}
	services := map[int]bool{}
	for _, s := range t.Services {
		if s.Measured {
			for _, c := range parseCPUList(s.CPUs) {
				services[c] = true
			}
		}
	}
	if len(services) == 0 {
		return // no pinning: every CPU may run a service
	}
	for cpu := range ms[0].PerCPUTotal {
		if services[cpu] || len(ms[n-1].PerCPUTotal) <= cpu {
			continue
		}
		if b := perCPU(cpu) - tc.idleBusy[cpu]; b > SaturatedBusy {
			tc.saturated = append(tc.saturated, cpuBusy{cpu, b})
		}
	}
}

func at0(xs []float64, i int) float64 {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}

// parseCPUList reads a cpuset list such as "0-2,5"; malformed parts are
// skipped (the list was validated when the run started).
func parseCPUList(s string) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			continue
		}
		b := a
		if ok {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				continue
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out
}

// acceptedBytes is the body bytes of the requests the sink accepted: all
// it received less those of the requests it rejected.
func acceptedBytes(s record.Telemetry) uint64 {
	return s.Bytes - min(s.RejectedBytes, s.Bytes)
}
