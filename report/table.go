package report

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// Table is the summary table of one load step: one row per cost, a column
// for the baseline and, per variant, its value, Δ and Δ%.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Tables builds one table per load step of s and, when there are several
// steps, a last one that sets the steps side by side.
func Tables(s *analyze.Summary) []Table {
	var ts []Table
	for _, st := range s.Steps {
		ts = append(ts, stepTable(s, st))
	}
	if len(s.Steps) > 1 {
		ts = append(ts, stepsTable(s))
	}
	return ts
}

// stepsTable sets the load steps side by side (the Sermant benchmark's
// 50- and 100-thread columns): one row per cost, and per step a column
// group of the baseline's value and each variant's Δ%.
func stepsTable(s *analyze.Summary) Table {
	t := Table{Title: "all load steps: " + s.Baseline + " and each variant's Δ%", Header: []string{"cost"}}
	others := nonBaseline(s)
	for _, st := range s.Steps {
		t.Header = append(t.Header, st.Label()+": "+s.Baseline)
		for _, v := range others {
			t.Header = append(t.Header, st.Label()+": "+v)
		}
	}
	var costs []analyze.Cost
	seen := map[analyze.Cost]bool{}
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			for _, c := range v.Costs {
				if !seen[c.Cost] {
					seen[c.Cost] = true
					costs = append(costs, c.Cost)
				}
			}
		}
	}
	for _, c := range costs {
		info := analyze.Info(c)
		label := info.Label
		if info.Unit != "" {
			label += " (" + info.Unit + ")"
		}
		row := []string{label}
		for _, st := range s.Steps {
			cell := func(name string) (analyze.CostResult, bool) {
				for _, v := range st.Variants {
					if v.Name == name {
						return find(v.Costs, c)
					}
				}
				return analyze.CostResult{}, false
			}
			if bc, ok := cell(s.Baseline); ok {
				row = append(row, num(bc.Value, info.Digits))
			} else {
				row = append(row, "")
			}
			for _, v := range others {
				if vc, ok := cell(v); ok && vc.Delta != nil {
					row = append(row, DeltaPct(info, vc.Delta))
				} else {
					row = append(row, "")
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func stepTable(s *analyze.Summary, st analyze.Step) Table {
	t := Table{Title: "at " + st.Label()}
	t.Header = []string{"cost"}
	var base *analyze.VariantResult
	var others []analyze.VariantResult
	for i := range st.Variants {
		if st.Variants[i].Name == s.Baseline {
			base = &st.Variants[i]
		} else {
			others = append(others, st.Variants[i])
		}
	}
	if base == nil {
		return t
	}
	t.Header = append(t.Header, fmt.Sprintf("%s (n=%d)", base.Name, base.Rounds))
	for _, v := range others {
		t.Header = append(t.Header, fmt.Sprintf("%s (n=%d)", v.Name, v.Rounds), "Δ", "Δ%")
	}
	for _, bc := range base.Costs {
		info := analyze.Info(bc.Cost)
		label := cmp.Or(bc.Label, info.Label) // analyze may name it for this run ("wall time per 1000000 messages")
		if info.Unit != "" {
			label += " (" + info.Unit + ")"
		}
		if bc.Cost == analyze.Throughput && st.Users == 0 {
			label = fmt.Sprintf("throughput (req/s, target %s)", num(st.Rate, 0))
		}
		row := []string{label, num(bc.Value, info.Digits)}
		for _, v := range others {
			vc, ok := find(v.Costs, bc.Cost)
			if !ok {
				row = append(row, "—", "—", "—")
				continue
			}
			row = append(row, num(vc.Value, info.Digits))
			if vc.Delta == nil {
				row = append(row, "—", "—")
				continue
			}
			row = append(row, signed(vc.Delta.Abs, info.Digits), DeltaPct(info, vc.Delta))
		}
		t.Rows = append(t.Rows, row)
	}
	t.Rows = append(t.Rows, serviceRows(base, others)...)
	return t
}

// serviceRows gives each measured service its own rows, after the totals:
// an agent daemon or sidecar next to the application it serves.
func serviceRows(base *analyze.VariantResult, others []analyze.VariantResult) [][]string {
	all := append([]analyze.VariantResult{*base}, others...)
	var names []string
	roles := map[string]string{}
	for _, v := range all {
		for _, sr := range v.Services {
			if _, ok := roles[sr.Name]; !ok {
				names = append(names, sr.Name)
				roles[sr.Name] = sr.Role
			}
		}
	}
	var rows [][]string
	for _, n := range names {
		for _, c := range analyze.ServiceCosts() {
			info := analyze.Info(c)
			label := fmt.Sprintf("%s (%s): %s", n, roles[n], info.Label)
			if info.Unit != "" {
				label += " (" + info.Unit + ")"
			}
			row := []string{label}
			any := false
			for i, v := range all {
				cr, ok := serviceCost(v, n, c)
				switch {
				case !ok && i == 0:
					row = append(row, "—")
				case !ok:
					row = append(row, "—", "—", "—")
				case i == 0:
					row = append(row, num(cr.Value, info.Digits))
					any = true
				case cr.Delta == nil:
					row = append(row, num(cr.Value, info.Digits), "—", "—")
					any = true
				default:
					row = append(row, num(cr.Value, info.Digits), signed(cr.Delta.Abs, info.Digits), DeltaPct(info, cr.Delta))
					any = true
				}
			}
			if any {
				rows = append(rows, row)
			}
		}
	}
	return rows
}

func serviceCost(v analyze.VariantResult, service string, c analyze.Cost) (analyze.CostResult, bool) {
	for _, sr := range v.Services {
		if sr.Name == service {
			return find(sr.Costs, c)
		}
	}
	return analyze.CostResult{}, false
}

func find(cs []analyze.CostResult, c analyze.Cost) (analyze.CostResult, bool) {
	for _, x := range cs {
		if x.Cost == c {
			return x, true
		}
	}
	return analyze.CostResult{}, false
}

// DeltaPct formats a difference for the Δ% column: the estimate with its
// 95% interval's half-width when significant, "~" with the interval when
// not, and the reason when there is no interval.
func DeltaPct(info analyze.CostInfo, d *analyze.Delta) string {
	if d.Pct == nil {
		// Additive cost: the interval is in the cost's unit.
		if d.CILow == nil {
			return "n/a"
		}
		half := (*d.CIHigh - *d.CILow) / 2
		if !d.Significant {
			return fmt.Sprintf("~ (± %s)", num(half, info.Digits))
		}
		return fmt.Sprintf("± %s", num(half, info.Digits))
	}
	if d.CILow == nil {
		return fmt.Sprintf("%+.1f%% (no CI, n=%d)", *d.Pct, d.N)
	}
	half := (*d.CIHigh - *d.CILow) / 2
	if !d.Significant {
		return fmt.Sprintf("~ (%+.1f%% ± %.1f%%)", *d.Pct, half)
	}
	return fmt.Sprintf("%+.1f%% ± %.1f%%", *d.Pct, half)
}

func num(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	s := fmt.Sprintf("%.*f", digits, v)
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s, "-0.") == "" {
		s = s[1:]
	}
	return s
}

func signed(v float64, digits int) string {
	s := num(v, digits)
	if !strings.HasPrefix(s, "-") && strings.Trim(s, "0.") != "" {
		s = "+" + s
	}
	return s
}
