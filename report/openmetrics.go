package report

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/tollperf/toll/analyze"
)

// OpenMetrics writes the summary in the OpenMetrics text format, so that
// the figures can be scraped or pushed into Prometheus. Every cost is a
// family of its own in base units (toll_cpu_per_request_seconds,
// toll_rss_bytes, toll_latency_percentile_seconds{percentile}, …) with # UNIT where the
// name ends in one; each variant's overhead against the baseline is
// toll_overhead_ratio{cost} with its 95% interval in
// toll_overhead_low_ratio and toll_overhead_high_ratio; toll_run_info
// names the run. docs/results-schema.md lists every family.
func OpenMetrics(w io.Writer, s *analyze.Summary) error {
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeOpenMetrics))
	for _, f := range Families(s) {
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("encode %s: %w", f.GetName(), err)
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		return c.Close()
	}
	return nil
}

// metric is how one cost is written for Prometheus.
type metric struct {
	// name is the family's name, ending in its base unit when it has one.
	name string
	// unit is the OpenMetrics unit ("seconds", "bytes", "ratio"), or "".
	unit string
	// scale turns the cost's value in toll's unit into the base unit.
	scale float64
	help  string
	// labels are extra labels that tell costs of one family apart
	// (percentile="99").
	labels []string
}

const (
	msToS   = 1e-3
	mibToB  = 1 << 20
	kibToB  = 1 << 10
	pctToR  = 1e-2
	perMinS = 1.0 / 60
)

// latencyHelp describes toll_latency_percentile_seconds. Its percentiles
// are gauges read from the load generator's histogram, not a Prometheus
// summary (no count, no sum), so they carry a percentile label, not the
// quantile label that promtool and the text parsers reserve for summaries.
const latencyHelp = "Request latency at a percentile, from the load generator's histogram (percentile 0 is the minimum, 100 the maximum)."

// costMetrics maps each cost to its family; a runtime's costs have theirs
// from their metrics (analyze.RuntimeMetric). Latency percentiles share
// toll_latency_percentile_seconds, told apart by percentile (the maximum
// is percentile 100). No help text holds a quote or a backslash: the
// OpenMetrics encoder escapes a quote in # HELP, which the classic text
// parser (promtool check metrics, node_exporter's textfile collector)
// refuses.
func costMetrics() map[analyze.Cost]metric {
	return map[analyze.Cost]metric{
		analyze.CPUPerRequest:  {"toll_cpu_per_request_seconds", "seconds", msToS, "CPU time per completed request, of the measured services.", nil},
		analyze.CPUNoJIT:       {"toll_cpu_per_request_excluding_jit_seconds", "seconds", msToS, "CPU time per completed request, of the measured services, less their JVMs' JIT compiler threads.", nil},
		analyze.CPUCores:       {"toll_cpu_cores", "", 1, "CPU used by the measured services, in cores (CPU seconds per second).", nil},
		analyze.InstrPerReq:    {"toll_instructions_per_request", "", 1, "Instructions retired per completed request.", nil},
		analyze.CyclesPerReq:   {"toll_cycles_per_request", "", 1, "CPU cycles per completed request.", nil},
		analyze.RSS:            {"toll_rss_bytes", "bytes", mibToB, "Resident set size of the measured services.", nil},
		analyze.Memory:         {"toll_memory_bytes", "bytes", mibToB, "Memory charged to the measured services' cgroups.", nil},
		analyze.Threads:        {"toll_threads", "", 1, "Threads of the measured services.", nil},
		analyze.FDs:            {"toll_open_fds", "", 1, "Open file descriptors of the measured services.", nil},
		analyze.LatencyMin:     {"toll_latency_percentile_seconds", "seconds", msToS, "", []string{"percentile", "0"}},
		analyze.LatencyP50:     {"toll_latency_percentile_seconds", "seconds", msToS, latencyHelp, []string{"percentile", "50"}},
		analyze.LatencyP90:     {"toll_latency_percentile_seconds", "seconds", msToS, "", []string{"percentile", "90"}},
		analyze.LatencyP95:     {"toll_latency_percentile_seconds", "seconds", msToS, "", []string{"percentile", "95"}},
		analyze.LatencyP99:     {"toll_latency_percentile_seconds", "seconds", msToS, "", []string{"percentile", "99"}},
		analyze.LatencyP999:    {"toll_latency_percentile_seconds", "seconds", msToS, "", []string{"percentile", "99.9"}},
		analyze.LatencyMax:     {"toll_latency_percentile_seconds", "seconds", msToS, "", []string{"percentile", "100"}},
		analyze.LatencyMean:    {"toll_latency_mean_seconds", "seconds", msToS, "Mean request latency, from the load generator's histogram.", nil},
		analyze.Throughput:     {"toll_throughput_requests_per_second", "", 1, "Completed requests per second.", nil},
		analyze.PeakThroughput: {"toll_peak_throughput_requests_per_second", "", 1, "Completed requests in the window's best whole second.", nil},
		analyze.ErrorRate:      {"toll_error_ratio", "ratio", pctToR, "Share of requests that failed.", nil},
		analyze.Spans:          {"toll_spans_per_second", "", 1, "Spans toll's sink received per second.", nil},
		analyze.SpansPerReq:    {"toll_spans_per_request", "", 1, "Spans toll's sink received per completed request.", nil},
		analyze.ExportBytes:    {"toll_telemetry_received_bytes_per_second", "", kibToB, "Telemetry bytes toll's sink received per second.", nil},
		analyze.Profiles:       {"toll_profiles_per_second", "", 1, "Profiles toll's sink received per second.", nil},
		analyze.Rejected:       {"toll_exports_rejected_per_second", "", 1, "Exports toll's sink rejected per second.", nil},
		analyze.RejectedBytes:  {"toll_telemetry_rejected_bytes_per_second", "", kibToB, "Telemetry bytes toll's sink rejected per second.", nil},
		analyze.Startup:        {"toll_startup_seconds", "seconds", msToS, "Time from start until the services were ready.", nil},
		analyze.MachineCPU:     {"toll_machine_cpu_ratio", "ratio", pctToR, "Busy share of the machine's CPUs (label cpu all) or of one CPU (its number).", []string{"cpu", "all"}},
		analyze.Steal:          {"toll_machine_steal_ratio", "ratio", pctToR, "Share of CPU time the hypervisor stole.", nil},
		analyze.MachineMem:     {"toll_machine_memory_ratio", "ratio", pctToR, "Share of the machine's memory in use.", nil},
	}
}

var (
	cpuCost     = regexp.MustCompile(`^machine_cpu(\d+)_pct$`)
	requestCost = regexp.MustCompile(`^request:(.*):([a-z0-9_]+)$`)
	notInName   = regexp.MustCompile(`[^a-zA-Z0-9_]`)
)

// metricOf returns how cost c is written: its family, and the labels that
// tell it apart within the family (the request of a request mix, a CPU).
func metricOf(c analyze.Cost) metric {
	metrics := costMetrics()
	if m, ok := metrics[c]; ok {
		return m
	}
	if rm, ok := analyze.RuntimeMetric(c); ok {
		unit, scale := rm.Base()
		return metric{name: rm.Family, unit: unit, scale: scale, help: rm.Help}
	}
	if p := cpuCost.FindStringSubmatch(string(c)); p != nil {
		m := metrics[analyze.MachineCPU]
		m.labels = []string{"cpu", p[1]}
		return m
	}
	if p := requestCost.FindStringSubmatch(string(c)); p != nil {
		if m, ok := metrics[analyze.Cost(p[2])]; ok {
			m.labels = append([]string{"request", p[1]}, m.labels...)
			return m
		}
	}
	if name, counter, ok := analyze.ScrapedMetric(c); ok {
		// One family for every scraped counter and one for every gauge,
		// the service's own metric named in a label.
		if counter {
			return metric{name: "toll_scraped_per_second", scale: 1, help: "A service's own counter (scrape:), its increase per second over the window.", labels: []string{"metric", name}}
		}
		return metric{name: "toll_scraped", scale: 1, help: "A service's own gauge (scrape:), its mean over the window's edges.", labels: []string{"metric", name}}
	}
	return metric{name: "toll_" + notInName.ReplaceAllString(string(c), "_"), scale: 1, help: "A cost toll has no base unit for, in " + analyze.Info(c).Unit + "."}
}

// RunLabel names the run in metric labels and the Pushgateway's grouping
// key: the UTC time it started, as in results directories' default names
// (20261123T101500Z), or "" when the manifest has none.
func RunLabel(s *analyze.Summary) string {
	if s.Manifest == nil || s.Manifest.Started.IsZero() {
		return ""
	}
	return s.Manifest.Started.UTC().Format("20060102T150405Z")
}

// Families returns the summary's figures as Prometheus metric families
// (see OpenMetrics). Every series has the labels scenario, run, variant,
// target_rate and target_users, so that runs and steps never collide.
func Families(s *analyze.Summary) []*dto.MetricFamily {
	fams := map[string]*dto.MetricFamily{}
	var order []string
	add := func(name, unit, help string, v float64, labels ...string) {
		f, ok := fams[name]
		if !ok {
			f = &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_GAUGE.Enum()}
			if unit != "" {
				f.Unit = proto.String(unit)
			}
			fams[name] = f
			order = append(order, name)
		}
		if f.Help == nil && help != "" {
			f.Help = proto.String(help)
		}
		m := &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(v)}}
		for i := 0; i+1 < len(labels); i += 2 {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(labels[i]), Value: proto.String(labels[i+1])})
		}
		f.Metric = append(f.Metric, m)
	}
	run := RunLabel(s)
	info := []string{"scenario", s.Scenario, "run", run, "baseline", s.Baseline}
	if m := s.Manifest; m != nil {
		info = append(info, "version", m.TollVersion, "seed", strconv.FormatInt(m.Seed, 10))
	}
	add("toll_run_info", "", "The run the other series describe: toll's version, the scenario, the seed of its order. Always 1.", 1, info...)
	if m := s.Manifest; m != nil && !m.Started.IsZero() {
		add("toll_run_started_timestamp_seconds", "seconds", "When the run started, in seconds since the epoch.", float64(m.Started.UnixNano())/1e9, "scenario", s.Scenario, "run", run)
	}
	for _, st := range s.Steps {
		rate := strconv.FormatFloat(st.Rate, 'f', -1, 64)
		for _, v := range st.Variants {
			for _, c := range v.Costs {
				if math.IsNaN(c.Value) || math.IsInf(c.Value, 0) {
					continue
				}
				base := []string{"scenario", s.Scenario, "run", run, "variant", v.Name, "target_rate", rate, "target_users", strconv.Itoa(st.Users)}
				if st.Workload != "" {
					// A start-up experiment's steps differ by CPU limit only.
					base = append(base, "workload", st.Workload, "cpu_limit", strconv.FormatFloat(st.CPULimit, 'f', -1, 64))
				} else if st.CPULimit > 0 {
					// A load test's matrix repeats each rate under each limit.
					base = append(base, "cpu_limit", strconv.FormatFloat(st.CPULimit, 'f', -1, 64))
				}
				m := metricOf(c.Cost)
				add(m.name, m.unit, m.help, c.Value*m.scale, slices.Concat(base, m.labels)...)
				d := c.Delta
				if d == nil || d.Pct == nil || d.CIUnit != "%" {
					continue // compared by difference: no ratio
				}
				costed := slices.Concat(base, []string{"cost", string(c.Cost)})
				add("toll_overhead_ratio", "ratio", "Variant / baseline of a cost (geometric mean of the paired per-round ratios): 1.5 is +50%.", 1+*d.Pct/100, costed...)
				low, high, ok := d.RatioBounds()
				if !ok {
					continue
				}
				add("toll_overhead_low_ratio", "ratio", "Low end of the 95% interval of toll_overhead_ratio.", low, costed...)
				add("toll_overhead_high_ratio", "ratio", "High end of the 95% interval of toll_overhead_ratio.", high, costed...)
				sig := 0.0
				if d.Significant {
					sig = 1
				}
				add("toll_overhead_significant", "", "1 when the 95% interval of toll_overhead_ratio excludes 1.", sig, costed...)
			}
		}
	}
	out := make([]*dto.MetricFamily, 0, len(order))
	for _, name := range order {
		out = append(out, fams[name])
	}
	return out
}

// FamilyNames returns the name of every family toll can write, for
// checking what dashboards query.
func FamilyNames() []string {
	seen := map[string]bool{}
	names := []string{"toll_run_info", "toll_run_started_timestamp_seconds",
		"toll_overhead_ratio", "toll_overhead_low_ratio", "toll_overhead_high_ratio", "toll_overhead_significant"}
	for _, n := range names {
		seen[n] = true
	}
	costs := []analyze.Cost{analyze.ScrapeCost("m", true), analyze.ScrapeCost("m", false)}
	for _, ci := range analyze.Costs() {
		costs = append(costs, ci.Cost)
	}
	for _, c := range costs {
		if n := metricOf(c).name; !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}
