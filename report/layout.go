package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/scenario"
)

// View is a run laid out as a published benchmark laid out its results
// (docs/reproductions.md): its tables in their own shape, each figure with
// toll's 95% interval added, and, for a benchmark that published a
// paragraph, that paragraph's sentences.
type View struct {
	// Layout is the layout's name (scenario.ReportLayouts), Title what it
	// reproduces.
	Layout string
	Title  string
	// Paragraphs are sentences in the benchmark's own words, with toll's
	// figures and intervals.
	Paragraphs []string
	Tables     []Table
	// Notes say what the layout could not fill from this run.
	Notes []string
}

// Layout lays the run out as the benchmark name published its results.
func Layout(s *analyze.Summary, name string) (*View, error) {
	var v *View
	switch name {
	case scenario.LayoutSermant:
		v = sermantView(s)
	case scenario.LayoutKindling:
		v = kindlingView(s)
	case scenario.LayoutJetty:
		v = jettyView(s)
	case scenario.LayoutSkyWalkingGo:
		v = skywalkingView(s)
	case scenario.LayoutEaseAgent:
		v = easeagentView(s)
	default:
		return nil, fmt.Errorf("no report layout %q%s", name, scenario.DidYouMean(name, scenario.ReportLayouts()))
	}
	v.Layout = name
	return v, nil
}

// LayoutMarkdown writes the run laid out as the benchmark name published
// it, as Markdown: `toll report --layout`, and the end of report.md when the
// scenario names a layout.
func LayoutMarkdown(w io.Writer, s *analyze.Summary, name string) error {
	v, err := Layout(s, name)
	if err != nil {
		return err
	}
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "## %s\n", escape(v.Title))
	for _, p := range v.Paragraphs {
		fmt.Fprintf(ew, "\n%s\n", escape(p))
	}
	for _, t := range v.Tables {
		fmt.Fprintf(ew, "\n### %s\n\n", escape(t.Title))
		writeMarkdownTable(ew, t)
	}
	fmt.Fprintf(ew, "\nEach change is the geometric mean of the per-round ratios with its 95%% confidence interval as [low, high] (or the mean of the per-round differences ± the half-width of its interval); ~ means the interval holds 0.\n")
	if anyChance(s) {
		fmt.Fprintf(ew, "%s follows an interval that excludes 0 at its own 95%% but not once corrected for the number of costs tested: it may be chance.\n", ChanceMark)
	}
	if len(s.CostCurves) > 0 {
		// A layout that spans several loads gains the model beside its
		// tables: what the steps say of the loads between them.
		fmt.Fprintf(ew, "\n### Across load\n\n```\n")
		if err := CostCurvesText(ew, s.CostCurves); err != nil {
			return err
		}
		fmt.Fprintf(ew, "```\n")
	}
	for _, n := range v.Notes {
		fmt.Fprintf(ew, "\n%s\n", escape(n))
	}
	return ew.err
}

// writeMarkdownTable writes t as a Markdown table, its first column left
// aligned and the others right aligned.
func writeMarkdownTable(w io.Writer, t Table) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(escapeAll(t.Header), " | "))
	align := []string{"---"}
	for range t.Header[1:] {
		align = append(align, "---:")
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(align, " | "))
	for _, r := range t.Rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(escapeAll(Texts(r)), " | "))
	}
}

// pair is one cost of the baseline and of a variant at one load step.
type pair struct {
	info       analyze.CostInfo
	base, vari *analyze.CostResult
}

// variantAt returns variant name's result at step st, or nil.
func variantAt(st analyze.Step, name string) *analyze.VariantResult {
	for i := range st.Variants {
		if st.Variants[i].Name == name {
			return &st.Variants[i]
		}
	}
	return nil
}

// costIn returns cost c of v, or nil.
func costIn(v *analyze.VariantResult, c analyze.Cost) *analyze.CostResult {
	if v == nil {
		return nil
	}
	for i := range v.Costs {
		if v.Costs[i].Cost == c {
			return &v.Costs[i]
		}
	}
	return nil
}

// pairAt is cost c of the baseline and of variant name at step st.
func pairAt(s *analyze.Summary, st analyze.Step, name string, c analyze.Cost) pair {
	return pair{info: analyze.Info(c), base: costIn(variantAt(st, s.Baseline), c), vari: costIn(variantAt(st, name), c)}
}

// appPairAt is pairAt for the application alone: where the variant runs
// an agent service beside one application service, its costs are the
// variant's totals with the agent's, and the application's own (compared
// with the same service in the baseline) are in its service results.
func appPairAt(s *analyze.Summary, st analyze.Step, name string, c analyze.Cost) pair {
	p := pairAt(s, st, name, c)
	vr := variantAt(st, name)
	if vr == nil {
		return p
	}
	var app *analyze.ServiceResult
	for i, sr := range vr.Services {
		if sr.Role == "app" {
			if app != nil {
				return p // several: the application is their total
			}
			app = &vr.Services[i]
		}
	}
	if app == nil {
		return p
	}
	for i := range app.Costs {
		if app.Costs[i].Cost == c {
			p.vari = &app.Costs[i]
			if b := variantAt(st, s.Baseline); b != nil {
				for _, sr := range b.Services {
					if sr.Name == app.Name {
						p.base = costIn(&analyze.VariantResult{Costs: sr.Costs}, c)
					}
				}
			}
		}
	}
	return p
}

// ok says whether both sides have the cost.
func (p pair) ok() bool { return p.base != nil && p.vari != nil }

// label is the cost's label with its unit.
func (p pair) label() string {
	l := p.info.Label
	if p.vari != nil && p.vari.Label != "" {
		l = p.vari.Label
	}
	if p.info.Unit != "" {
		l += " (" + p.info.Unit + ")"
	}
	return l
}

// change is the variant's change: Δ% [low, high] for a ratio cost, the
// difference ± half-width in the cost's unit for an additive one.
func (p pair) change() string {
	if p.vari == nil || p.vari.Delta == nil {
		return "—"
	}
	return DeltaPct(p.info, p.vari.Delta)
}

// estimate is the variant's change without its interval, for a table
// that gives the interval a column of its own: "+19.9%", "~ +4.4%".
func (p pair) estimate() string {
	if p.vari == nil || p.vari.Delta == nil {
		return "—"
	}
	d := p.vari.Delta
	if d.Pct == nil || d.CILow == nil {
		return DeltaPct(p.info, d)
	}
	if !d.Significant {
		return "~ " + pctBound(*d.Pct, 1)
	}
	return pctBound(*d.Pct, 1)
}

// diff is the variant's difference in the cost's unit, with its 95%
// interval's half-width when there is one.
func (p pair) diff() string {
	if p.vari == nil || p.vari.Delta == nil {
		return "—"
	}
	d := p.vari.Delta
	s := signed(d.Abs, p.info.Digits)
	if d.AbsHalfWidth != nil {
		s += " ± " + num(*d.AbsHalfWidth, p.info.Digits)
	}
	return s
}

// cell is the change's typed cell with text as its text.
func (p pair) cell(text string) Cell {
	if p.vari == nil || p.vari.Delta == nil {
		return TextCell(text)
	}
	c := ChangeCell(p.info, p.vari.Delta)
	c.Text = text
	return c
}

// triple is Sermant's "baseline / variant / Δ" cell, the change's 95%
// interval added: "0.138 / 0.169 / +0.031 (+22.4% [+19.5%, +25.4%])".
func (p pair) triple() Cell {
	if !p.ok() {
		return noneCell
	}
	return p.cell(fmt.Sprintf("%s / %s / %s (%s)", num(p.base.Value, p.info.Digits), num(p.vari.Value, p.info.Digits), p.diff(), p.change()))
}

// value is one side's value, or "—".
func value(c *analyze.CostResult, info analyze.CostInfo) Cell {
	if c == nil {
		return noneCell
	}
	return valueCell(c.Value, info)
}

// changeRow is a row of a cost: label, baseline, variant, Δ, Δ%.
func (p pair) changeRow(label string) []Cell {
	return []Cell{TextCell(cmp.Or(label, p.label())), value(p.base, p.info), value(p.vari, p.info), p.cell(p.diff()), p.cell(p.change())}
}

// stepVariantTitle names a table of one variant at one step, the step
// left out when the run has one.
func stepVariantTitle(s *analyze.Summary, st analyze.Step, what string) string {
	if len(s.Steps) > 1 {
		return what + " at " + st.Label()
	}
	return what
}

// sermantView is Sermant's plugin tables: load steps (thread counts) as
// rows, "baseline / variant / Δ" cells for CPU, heap, metaspace, P90, P95
// and throughput; and per variant its time-free summary of throughput
// (best second and mean) and the increases of CPU, heap and metaspace.
func sermantView(s *analyze.Summary) *View {
	v := &View{Title: "Sermant's layout: " + s.Baseline + " / variant / Δ per load step"}
	costs := []analyze.Cost{analyze.CPUCores, analyze.JVMHeapUsed, analyze.Metaspace, analyze.LatencyP90, analyze.LatencyP95, analyze.Throughput}
	for _, name := range nonBaseline(s) {
		t := Table{Title: fmt.Sprintf("%s / %s / Δ", s.Baseline, name), Header: []string{"load step"}}
		for _, c := range costs {
			t.Header = append(t.Header, pair{info: analyze.Info(c)}.label())
		}
		for _, st := range s.Steps {
			row := []Cell{TextCell(st.Label())}
			for _, c := range costs {
				row = append(row, pairAt(s, st, name, c).triple())
			}
			t.Rows = append(t.Rows, row)
		}
		v.Tables = append(v.Tables, t)
	}
	t := Table{Title: "max TPS, mean TPS and the increases of CPU, heap and metaspace (Sermant's plugin table)",
		Header: []string{"variant", "max TPS (best second)", "mean TPS", "CPU increase", "heap increase (MiB)", "metaspace increase (MiB)"}}
	for _, st := range s.Steps {
		for _, name := range nonBaseline(s) {
			label := name
			if len(s.Steps) > 1 {
				label += " at " + st.Label()
			}
			row := []Cell{TextCell(label), pairAt(s, st, name, analyze.PeakThroughput).triple(), pairAt(s, st, name, analyze.Throughput).triple()}
			cpu := pairAt(s, st, name, analyze.CPUCores)
			row = append(row, cpu.cell(cpu.change()))
			for _, c := range []analyze.Cost{analyze.JVMHeapUsed, analyze.Metaspace} {
				p := pairAt(s, st, name, c)
				row = append(row, p.cell(p.diff()))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	v.Tables = append(v.Tables, t)
	v.Notes = append(v.Notes, "Sermant's CPU is a pod's share of its 4 vCPUs; toll's is the measured services' CPU in cores, from their cgroup. Heap and metaspace are the JVM's used bytes (hsperfdata), in MiB.")
	return v
}

// kindlingView is Kindling's table: costs as rows (machine, application,
// the agent's own), each load step's baseline, variant and Δ side by side.
// The application's CPU and memory are its own, without the agent's.
func kindlingView(s *analyze.Summary) *View {
	v := &View{Title: "Kindling's layout: machine, application and agent costs, load steps side by side"}
	app := []struct {
		label string
		c     analyze.Cost
	}{
		{"machine-cpu (%)", analyze.MachineCPU},
		{"machine-mem (%)", analyze.MachineMem},
		{"application-cpu (cores)", analyze.CPUCores},
		{"application-memory (RSS, MiB)", analyze.RSS},
		{"application-latency (mean, ms)", analyze.LatencyMean},
		{"application-latency (p99, ms)", analyze.LatencyP99},
		{"application-tps (req/s)", analyze.Throughput},
	}
	for _, name := range nonBaseline(s) {
		t := Table{Title: fmt.Sprintf("%s and %s", s.Baseline, name), Header: []string{"cost"}}
		for _, st := range s.Steps {
			t.Header = append(t.Header, st.Label()+": "+s.Baseline, st.Label()+": "+name, st.Label()+": Δ")
		}
		for _, a := range app {
			row := []Cell{TextCell(a.label)}
			for _, st := range s.Steps {
				p := appPairAt(s, st, name, a.c)
				row = append(row, value(p.base, p.info), value(p.vari, p.info), p.cell(p.diff()+" ("+p.change()+")"))
			}
			t.Rows = append(t.Rows, row)
		}
		// The agent's own resources: its services' costs in the variant
		// (none in the baseline, where the agent does not run).
		var agents []string
		for _, st := range s.Steps {
			if vr := variantAt(st, name); vr != nil {
				for _, sr := range vr.Services {
					if sr.Role == "agent" && !slices.Contains(agents, sr.Name) {
						agents = append(agents, sr.Name)
					}
				}
			}
		}
		for _, agent := range agents {
			for _, c := range []analyze.Cost{analyze.CPUCores, analyze.RSS} {
				info := analyze.Info(c)
				row := []Cell{TextCell(fmt.Sprintf("agent %s %s (%s)", agent, strings.ToLower(info.Label), info.Unit))}
				for _, st := range s.Steps {
					var cr *analyze.CostResult
					if vr := variantAt(st, name); vr != nil {
						for _, sr := range vr.Services {
							if sr.Name == agent {
								for i := range sr.Costs {
									if sr.Costs[i].Cost == c {
										cr = &sr.Costs[i]
									}
								}
							}
						}
					}
					row = append(row, noneCell, value(cr, info), noneCell)
				}
				t.Rows = append(t.Rows, row)
			}
		}
		if len(agents) == 0 {
			v.Notes = append(v.Notes, fmt.Sprintf("%s has no service of role agent: the agent's own CPU and memory have no row.", name))
		}
		v.Tables = append(v.Tables, t)
	}
	return v
}

// jettyView is Jetty's results: the latency and memory changes as the
// sentences' "from → to (change)", then CPU every 5 s through the load
// test, one row per variant.
func jettyView(s *analyze.Summary) *View {
	v := &View{Title: "Jetty's layout: latency and memory, and CPU every 5 s"}
	costs := []analyze.Cost{analyze.LatencyP50, analyze.LatencyMean, analyze.LatencyMin, analyze.LatencyP99,
		analyze.Memory, analyze.RSS, analyze.JVMHeapCommit}
	for _, st := range s.Steps {
		for _, name := range nonBaseline(s) {
			t := Table{Title: stepVariantTitle(s, st, fmt.Sprintf("%s → %s", s.Baseline, name)),
				Header: []string{"cost", s.Baseline + " → " + name, "change", "95% interval"}}
			for _, c := range costs {
				p := pairAt(s, st, name, c)
				if !p.ok() {
					continue
				}
				bounds := "—"
				if p.vari.Delta != nil {
					bounds = cmp.Or(Bounds(p.info, p.vari.Delta), "—")
				}
				t.Rows = append(t.Rows, []Cell{TextCell(p.label()),
					TextCell(num(p.base.Value, p.info.Digits) + " → " + num(p.vari.Value, p.info.Digits)),
					p.cell(p.estimate()), p.cell(bounds)})
			}
			v.Tables = append(v.Tables, t)
		}
		t := Table{Title: stepVariantTitle(s, st, "CPU every 5 s (cores: median of the trials [quartiles])"), Header: []string{"variant"}}
		for _, set := range st.Series {
			for _, m := range set.Metrics {
				if m.Metric != "cpu" {
					continue
				}
				b := m.Every(5)
				if len(t.Header) == 1 {
					for _, at := range b.T {
						t.Header = append(t.Header, fmt.Sprintf("%+gs", at))
					}
				}
				row := []Cell{TextCell(set.Variant)}
				for i := range b.T {
					if i+1 >= len(t.Header) {
						break
					}
					row = append(row, TextCell(fmt.Sprintf("%s [%s–%s]", num(b.Median[i], 2), num(b.Low[i], 2), num(b.High[i], 2))))
				}
				t.Rows = append(t.Rows, row)
			}
		}
		if len(t.Rows) > 0 {
			v.Tables = append(v.Tables, t)
		}
	}
	v.Notes = append(v.Notes, "Jetty measured CPU with ps every 5 s (212% = 2.12 cores) over one load test; toll's columns are 5 s buckets of the per-second CPU from the services' cgroup, seconds counted from the measured window's start (negative: warm-up), the median over the trials and the band between their quartiles. Jetty's \"total committed memory\" (NMT) has no row here unless the run measured it.")
	return v
}

// skywalkingView is SkyWalking Go's paragraph: CPU usage, memory usage and
// the average response time of each version, then the increases, each
// with toll's interval.
func skywalkingView(s *analyze.Summary) *View {
	v := &View{Title: "SkyWalking Go's layout: CPU, memory and average response time"}
	for _, st := range s.Steps {
		for _, name := range nonBaseline(s) {
			mcpu := pairAt(s, st, name, analyze.MachineCPU)
			cpu := pairAt(s, st, name, analyze.CPUCores)
			mem := pairAt(s, st, name, analyze.MachineMem)
			rss := pairAt(s, st, name, analyze.RSS)
			lat := pairAt(s, st, name, analyze.LatencyMean)
			spans := pairAt(s, st, name, analyze.Spans)
			if !cpu.ok() || !lat.ok() {
				continue
			}
			side := func(who string, pick func(pair) *analyze.CostResult) string {
				return fmt.Sprintf("In the %s version at %s, the CPU usage was %s%% of the machine (%s cores of the measured services), memory usage was %s%% (%s MiB RSS), and the average response time for a single request was %s ms.",
					who, st.Label(), fig(pick(mcpu), mcpu.info), fig(pick(cpu), cpu.info), fig(pick(mem), mem.info), fig(pick(rss), rss.info), fig(pick(lat), lat.info))
			}
			v.Paragraphs = append(v.Paragraphs,
				side(s.Baseline, func(p pair) *analyze.CostResult { return p.base }),
				side(name, func(p pair) *analyze.CostResult { return p.vari }),
				fmt.Sprintf("From these results, with %s the CPU of the measured services changed by %s (machine CPU by %s points), their memory by %s (machine memory by %s points), and the average response time by %s ms, %s: the in-band cost. The collector received %s spans/s from %s.",
					name, cpu.change(), mcpu.diff(), rss.change(), mem.diff(), lat.diff(), lat.change(), fig(spans.vari, spans.info), name))
			t := Table{Title: stepVariantTitle(s, st, s.Baseline+" and "+name),
				Header: []string{"figure", s.Baseline, name, "Δ", "Δ%"}}
			for _, p := range []pair{mcpu, cpu, mem, rss, lat, pairAt(s, st, name, analyze.LatencyP99), spans} {
				if p.base != nil || p.vari != nil {
					t.Rows = append(t.Rows, p.changeRow(""))
				}
			}
			v.Tables = append(v.Tables, t)
		}
	}
	return v
}

// fig is a cost's value, or "—".
func fig(c *analyze.CostResult, info analyze.CostInfo) string {
	if c == nil {
		return "—"
	}
	return num(c.Value, info.Digits)
}

// easeagentView is EaseAgent's results: k6's summary of the request
// duration and rate for both hosts side by side, the process CPU and heap,
// and each request of the mix (EaseAgent's 3-span and 10-span URIs) apart.
func easeagentView(s *analyze.Summary) *View {
	v := &View{Title: "EaseAgent's layout: k6's summary side by side, CPU and heap, each request of the mix"}
	summary := []struct {
		label string
		c     analyze.Cost
	}{
		{"http_req_duration avg (ms)", analyze.LatencyMean},
		{"http_req_duration min (ms)", analyze.LatencyMin},
		{"http_req_duration med (ms)", analyze.LatencyP50},
		{"http_req_duration p(90) (ms)", analyze.LatencyP90},
		{"http_req_duration p(95) (ms)", analyze.LatencyP95},
		{"http_req_duration max (ms)", analyze.LatencyMax},
		{"http_reqs (/s)", analyze.Throughput},
		{"http_req_failed (%)", analyze.ErrorRate},
		{"process CPU (cores)", analyze.CPUCores},
		{"heap used (MiB)", analyze.JVMHeapUsed},
	}
	for _, st := range s.Steps {
		for _, name := range nonBaseline(s) {
			t := Table{Title: stepVariantTitle(s, st, s.Baseline+" and "+name),
				Header: []string{"metric", s.Baseline, name, "Δ", "Δ%"}}
			for _, row := range summary {
				if p := pairAt(s, st, name, row.c); p.base != nil || p.vari != nil {
					t.Rows = append(t.Rows, p.changeRow(row.label))
				}
			}
			v.Tables = append(v.Tables, t)
			// Each request of the mix: its throughput, mean and p90.
			var names []string
			if vr := variantAt(st, name); vr != nil {
				for _, c := range vr.Costs {
					if n, _, ok := analyze.SplitRequestCost(c.Cost); ok && !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
			if len(names) == 0 {
				continue
			}
			rt := Table{Title: stepVariantTitle(s, st, "each request: "+s.Baseline+" / "+name+" / Δ"),
				Header: []string{"request", "throughput (req/s)", "mean (ms)", "p90 (ms)", "errors (%)"}}
			for _, n := range names {
				row := []Cell{TextCell(n)}
				for _, c := range []analyze.Cost{analyze.Throughput, analyze.LatencyMean, analyze.LatencyP90, analyze.ErrorRate} {
					row = append(row, pairAt(s, st, name, analyze.RequestCost(n, c)).triple())
				}
				rt.Rows = append(rt.Rows, row)
			}
			v.Tables = append(v.Tables, rt)
		}
	}
	v.Notes = append(v.Notes, "EaseAgent read CPU as the JVM's ProcessCpuLoad and dropped the first 5 and last 2 minutes; toll's CPU is the measured services' cgroup, over each trial's window less its trims.")
	return v
}
