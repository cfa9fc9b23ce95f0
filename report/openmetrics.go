package report

import (
	"fmt"
	"io"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/tollperf/toll/analyze"
)

// OpenMetrics writes the summary in the OpenMetrics text format, so the
// figures can be scraped or pushed into Prometheus and kept on existing
// dashboards:
//
//	toll_cost{scenario, variant, target_rate, cost, unit}      mean over rounds
//	toll_delta_pct{scenario, variant, target_rate, cost}       Δ% against the baseline
//	toll_delta_ci_low_pct / toll_delta_ci_high_pct             its 95% interval
//	toll_delta_significant{…}                                  1 when the interval excludes 0
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

// Families returns the summary's figures as Prometheus metric families
// (see OpenMetrics for the names and labels).
func Families(s *analyze.Summary) []*dto.MetricFamily {
	fams := map[string]*dto.MetricFamily{}
	order := []string{}
	family := func(name, help string) *dto.MetricFamily {
		if f, ok := fams[name]; ok {
			return f
		}
		f := &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: dto.MetricType_GAUGE.Enum()}
		fams[name] = f
		order = append(order, name)
		return f
	}
	add := func(name, help string, v float64, labels ...string) {
		m := &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(v)}}
		for i := 0; i+1 < len(labels); i += 2 {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(labels[i]), Value: proto.String(labels[i+1])})
		}
		f := family(name, help)
		f.Metric = append(f.Metric, m)
	}
	for _, st := range s.Steps {
		rate := strconv.FormatFloat(st.Rate, 'f', -1, 64)
		for _, v := range st.Variants {
			for _, c := range v.Costs {
				base := []string{"scenario", s.Scenario, "variant", v.Name, "target_rate", rate, "target_users", strconv.Itoa(st.Users), "cost", string(c.Cost)}
				if st.Workload != "" {
					// A start-up experiment's steps differ by CPU limit only.
					base = append(base, "workload", st.Workload, "cpu_limit", strconv.FormatFloat(st.CPULimit, 'f', -1, 64))
				}
				add("toll_cost", "A cost's mean over the rounds, in its unit.", c.Value, append(base, "unit", c.Unit)...)
				d := c.Delta
				if d == nil || d.Pct == nil {
					continue
				}
				add("toll_delta_pct", "Change against the baseline in percent (geometric mean of per-round ratios).", *d.Pct, base...)
				if d.CILow != nil {
					add("toll_delta_ci_low_pct", "Low end of the change's 95% confidence interval, in percent.", *d.CILow, base...)
					add("toll_delta_ci_high_pct", "High end of the change's 95% confidence interval, in percent.", *d.CIHigh, base...)
					sig := 0.0
					if d.Significant {
						sig = 1
					}
					add("toll_delta_significant", "1 when the 95% interval of the change excludes 0.", sig, base...)
				}
			}
		}
	}
	out := make([]*dto.MetricFamily, 0, len(order))
	for _, name := range order {
		out = append(out, fams[name])
	}
	return out
}
