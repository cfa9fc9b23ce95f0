package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/report"
)

// newCostCmd returns `toll cost DIR`: the bill at a user's load.
func newCostCmd() *cobra.Command {
	var rate string
	var instances int
	var perCoreHour, perGiBHour float64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cost DIR --rate R [--instances N]",
		Short: "What each variant will add at your load: cores, memory and latency, in total",
		Long: `Reads a run whose load steps span several rates (load.rates, or toll run
--curve), fits what each variant adds to CPU and memory as a fixed part plus a
part per request, with intervals, and says what it adds at the load given:
N instances each at --rate requests a second, in total over the instances, with
a prediction interval; a latency at each instance's rate, read between the two
steps around it. A rate outside the steps measured is refused, and so is a line
the steps do not lie on (the steps are shown instead). With prices, it says
what the added cores and memory cost an hour (docs/usage.md, "What it costs at
your load").

--rate takes one rate (every instance), A..B (the bill at A and at B), or a list
R1,R2,… (one instance at each, times --instances).`,
		Example: `  toll cost results/otel-curve --rate 300..1200 --instances 40
  toll cost results/otel-curve --rate 600 --instances 40 --price-core-hour 0.04 --price-gib-hour 0.005`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			loads, err := fleetLoads(rate, instances)
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			if perCoreHour < 0 || perGiBHour < 0 {
				return &exitError{ExitUsage, errors.New("--price-core-hour and --price-gib-hour: want prices of 0 or more")}
			}
			sum, err := summarizeDir(args[0], false)
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			curves := analyze.CostCurves(sum)
			if len(curves) == 0 {
				return &exitError{ExitUsage, fmt.Errorf("%s: %w", args[0], analyze.ErrNoCurve)}
			}
			type bill struct {
				Load   analyze.FleetLoad  `json:"load"`
				Lines  []analyze.BillLine `json:"lines"`
				Prices []analyze.Price    `json:"prices,omitempty"`
			}
			var bills []bill
			for _, l := range loads {
				lines, err := analyze.Bill(curves, l)
				if err != nil {
					return &exitError{ExitFailure, err}
				}
				bills = append(bills, bill{l, lines, analyze.Prices(lines, perCoreHour, perGiBHour)})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Curves []analyze.CostCurve `json:"curves"`
					Bills  []bill              `json:"bills"`
				}{curves, bills})
			}
			if err := report.CostCurvesText(out, curves); err != nil {
				return err
			}
			for _, b := range bills {
				fmt.Fprintln(out)
				if err := report.BillText(out, b.Load, b.Lines, b.Prices); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&rate, "rate", "", "requests a second per instance: R, A..B or R1,R2,…")
	fl.IntVar(&instances, "instances", 1, "how many instances run at that rate")
	fl.Float64Var(&perCoreHour, "price-core-hour", 0, "the price of a core for an hour, to price the added CPU")
	fl.Float64Var(&perGiBHour, "price-gib-hour", 0, "the price of a GiB of memory for an hour, to price the added RSS")
	fl.BoolVar(&asJSON, "json", false, "write the curves and the bill as JSON")
	return cmd
}

// fleetLoads reads --rate and --instances: one load for a rate or a list,
// two (each end) for a range.
func fleetLoads(rate string, instances int) ([]analyze.FleetLoad, error) {
	if rate == "" {
		return nil, errors.New("--rate: the requests a second each instance serves, e.g. --rate 300, --rate 300..1200")
	}
	if instances < 1 || instances > 1_000_000 {
		return nil, fmt.Errorf("--instances %d: want 1 to 1000000", instances)
	}
	parse := func(s string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v >= 0) || v > 1e9 {
			return 0, fmt.Errorf("--rate %q: %q is not a rate (requests a second, 0 or more)", rate, s)
		}
		return v, nil
	}
	each := func(rs []float64) analyze.FleetLoad {
		var l analyze.FleetLoad
		for range instances {
			l.Rates = append(l.Rates, rs...)
		}
		return l
	}
	if a, b, ok := strings.Cut(rate, ".."); ok {
		lo, err := parse(a)
		if err != nil {
			return nil, err
		}
		hi, err := parse(b)
		if err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, fmt.Errorf("--rate %s: the range's end is below its start", rate)
		}
		return []analyze.FleetLoad{each([]float64{lo}), each([]float64{hi})}, nil
	}
	var rs []float64
	for _, f := range strings.Split(rate, ",") {
		v, err := parse(f)
		if err != nil {
			return nil, err
		}
		rs = append(rs, v)
	}
	return []analyze.FleetLoad{each(rs)}, nil
}
