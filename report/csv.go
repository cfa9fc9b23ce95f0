package report

import (
	"encoding/csv"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/tollperf/toll/analyze"
)

// CSV writes the long format: one row per trial and cost, with the columns
// scenario, step, target_rate, round, trial, variant, cost, unit, value,
// flagged. Every consumer (pandas, R, a spreadsheet) can pivot it.
func CSV(w io.Writer, s *analyze.Summary) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"scenario", "step", "target_rate", "target_users", "round", "trial", "variant", "cost", "unit", "value", "flagged"})
	steps := map[int]analyze.Step{}
	for _, st := range s.Steps {
		steps[st.Index] = st
	}
	for _, t := range s.Trials {
		costs := make([]string, 0, len(t.Costs))
		for c := range t.Costs {
			costs = append(costs, string(c))
		}
		sort.Strings(costs)
		for _, c := range costs {
			info := analyze.Info(analyze.Cost(c))
			cw.Write([]string{s.Scenario, strconv.Itoa(t.Step), strconv.FormatFloat(steps[t.Step].Rate, 'f', -1, 64),
				strconv.Itoa(steps[t.Step].Users), strconv.Itoa(t.Round), strconv.Itoa(t.Index), t.Variant, c, info.Unit,
				strconv.FormatFloat(t.Costs[analyze.Cost(c)], 'g', 10, 64), strconv.FormatBool(len(t.Flags) > 0)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// SeriesCSV writes series.csv: one row per second of every trial's
// measured window (analyze.Second), with the columns scenario, step,
// target_rate, target_users, round, trial, variant, flagged, t_s,
// throughput_rps, errors, latency_p50_ms, latency_p99_ms, machine_cpu_pct,
// and for each measured service S (in the order the trials list them)
// S_cpu_cores, S_rss_mib and S_heap_mib. A figure a second lacks (no JVM,
// no completed request) is empty.
func SeriesCSV(w io.Writer, s *analyze.Summary) error {
	var services []string
	for _, t := range s.Trials {
		for _, sec := range t.Seconds {
			for _, sv := range sec.Services {
				if !slices.Contains(services, sv.Name) {
					services = append(services, sv.Name)
				}
			}
		}
	}
	cw := csv.NewWriter(w)
	header := []string{"scenario", "step", "target_rate", "target_users", "round", "trial", "variant", "flagged", "t_s",
		"throughput_rps", "errors", "latency_p50_ms", "latency_p99_ms", "machine_cpu_pct"}
	for _, n := range services {
		header = append(header, n+"_cpu_cores", n+"_rss_mib", n+"_heap_mib")
	}
	cw.Write(header)
	steps := map[int]analyze.Step{}
	for _, st := range s.Steps {
		steps[st.Index] = st
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	for _, t := range s.Trials {
		for _, sec := range t.Seconds {
			row := []string{s.Scenario, strconv.Itoa(t.Step), f(steps[t.Step].Rate), strconv.Itoa(steps[t.Step].Users),
				strconv.Itoa(t.Round), strconv.Itoa(t.Index), t.Variant, strconv.FormatBool(len(t.Flags) > 0), f(sec.T),
				f(sec.Throughput), strconv.FormatUint(sec.Errors, 10), opt(sec.LatencyP50), opt(sec.LatencyP99), opt(sec.MachineCPU)}
			for _, n := range services {
				i := slices.IndexFunc(sec.Services, func(sv analyze.ServiceSecond) bool { return sv.Name == n })
				if i < 0 {
					row = append(row, "", "", "")
					continue
				}
				sv := sec.Services[i]
				row = append(row, f(sv.CPU), f(sv.RSS), opt(sv.Heap))
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}
