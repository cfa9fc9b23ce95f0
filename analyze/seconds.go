package analyze

import (
	"maps"
	"math"
	"slices"

	"github.com/tollperf/toll/record"
)

// Second is one whole second of a trial's measured window: the load's
// figures for the requests sent in it and each measured service's, on the
// time base of Series (point T stands for [T, T+1) from MeasureStart).
// series.csv has a line per Second of every trial.
type Second struct {
	T float64 `json:"t"`
	// Throughput counts the requests sent in the second that completed,
	// and Errors those that failed.
	Throughput float64 `json:"throughput_rps"`
	Errors     uint64  `json:"errors"`
	// LatencyP50 and LatencyP99 are the second's percentiles in ms; absent
	// when no request of the second completed.
	LatencyP50 *float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99 *float64 `json:"latency_p99_ms,omitempty"`
	// MachineCPU is the whole machine's busy share in percent, when the
	// trial sampled the machine.
	MachineCPU *float64 `json:"machine_cpu_pct,omitempty"`
	// Services are the measured services' figures, in the trial's order.
	Services []ServiceSecond `json:"services"`
}

// ServiceSecond is one measured service's figures in one second.
type ServiceSecond struct {
	Name string `json:"name"`
	// CPU is the CPU used in the second, in cores.
	CPU float64 `json:"cpu_cores"`
	// RSS is the process tree's resident set at the second's middle, MiB.
	RSS float64 `json:"rss_mib"`
	// Heap is a JVM's heap used at the second's middle, MiB, when the
	// service runs one.
	Heap *float64 `json:"heap_mib,omitempty"`
}

// trialSeconds returns t's whole seconds that every measured service's
// samples and the load's intervals cover.
func trialSeconds(t *record.Trial) []Second {
	ss := measuredSeries(t)
	rate := ratePerSecond(t)
	if len(ss) == 0 || len(rate) == 0 {
		return nil
	}
	type per struct {
		cpu, rss, heap map[int]float64
	}
	svcs := make([]per, len(ss))
	for i, s := range ss {
		one := []record.ServiceSeries{s}
		svcs[i] = per{
			cpu: cpuPerSecondOf(t, one),
			rss: gaugePerSecondOf(t, one, func(p record.Sample) (float64, bool) { return float64(p.RSS) / (1 << 20), true }),
			heap: gaugePerSecondOf(t, one, func(p record.Sample) (float64, bool) {
				j := p.Runtime("jvm")
				if j == nil {
					return 0, false
				}
				return j.Values["heap_used"] / (1 << 20), true
			}),
		}
	}
	sec := &secondsOf{Trial: t}
	hists := sec.histograms()
	errs := map[int]uint64{}
	for _, iv := range t.Intervals {
		if wholeInterval(t, iv) {
			errs[int(iv.T)] = iv.Errors.Total()
		}
	}
	var out []Second
	for _, k := range slices.Sorted(maps.Keys(rate)) {
		row := Second{T: float64(k), Throughput: rate[k], Errors: errs[k]}
		whole := true
		for i, s := range ss {
			cpu, ok := svcs[i].cpu[k]
			if !ok {
				whole = false
				break
			}
			sv := ServiceSecond{Name: s.Service, CPU: cpu, RSS: svcs[i].rss[k]}
			if h, ok := svcs[i].heap[k]; ok {
				sv.Heap = &h
			}
			row.Services = append(row.Services, sv)
		}
		if !whole {
			continue
		}
		if h := hists[k]; h != nil {
			p50, p99 := float64(h.ValueAtQuantile(50))/1000, float64(h.ValueAtQuantile(99))/1000
			row.LatencyP50, row.LatencyP99 = &p50, &p99
		}
		if m, ok := machineBusy(t.Machine, float64(k), float64(k+1)); ok {
			row.MachineCPU = &m
		}
		out = append(out, row)
	}
	return out
}

// machineBusy is the machine's busy share from a to b, in percent, from
// its cumulative CPU times; false when the samples do not cover [a, b].
func machineBusy(ms []record.MachineSample, a, b float64) (float64, bool) {
	if len(ms) < 2 || ms[0].T > a+1e-9 || ms[len(ms)-1].T < b-sampleSlack {
		return 0, false
	}
	ts, busy, total := make([]float64, len(ms)), make([]float64, len(ms)), make([]float64, len(ms))
	for i, m := range ms {
		ts[i], busy[i], total[i] = m.T, m.Busy, m.Total
	}
	b = math.Min(b, ts[len(ts)-1])
	dt := interpolate(ts, total, b) - interpolate(ts, total, a)
	if dt <= 0 {
		return 0, false
	}
	return 100 * (interpolate(ts, busy, b) - interpolate(ts, busy, a)) / dt, true
}
