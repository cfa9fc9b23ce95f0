package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/report"
	"github.com/tollperf/toll/scenario"
)

func newReportCmd() *cobra.Command {
	var opt renderOptions
	var fromSummary bool
	var gateTexts []string
	var layout string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Analyse a results directory again and rewrite its reports",
		Long: `Analyse a results directory again and rewrite its reports. A run that did not
carry out its whole plan (interrupted, killed, stopped by an error) is reported
as partial, with the trials it is missing. --fail-on judges the variants against
the baseline as toll run --fail-on does. --layout prints the run laid out as a
published benchmark laid out its tables (` + strings.Join(scenario.ReportLayouts(), ", ") + `),
as Markdown, instead of the terminal table (docs/reproductions.md).

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			gates, err := parseGates(gateTexts)
			if err != nil {
				return err
			}
			if err := opt.check(); err != nil {
				return &exitError{ExitUsage, err}
			}
			if fromSummary && opt.seriesEvery != 0 {
				return &exitError{ExitUsage, errors.New("--series-every needs the trials analysed again; it does not apply with --from-summary")}
			}
			if layout != "" && !slices.Contains(scenario.ReportLayouts(), layout) {
				return &exitError{ExitUsage, fmt.Errorf("--layout %q is not a layout%s", layout, scenario.DidYouMean(layout, scenario.ReportLayouts()))}
			}
			// The terminal table, or the layout instead of it.
			out := cmd.OutOrStdout()
			table := out
			if layout != "" {
				table = io.Discard
			}
			dir, err := record.Open(args[0])
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			softMemoryLimit()
			if fromSummary {
				sum, err := renderSummary(dir)
				if err != nil {
					return &exitError{ExitFailure, err}
				}
				if err := report.Text(table, sum); err != nil {
					return &exitError{ExitFailure, err}
				}
				if err := printLayout(out, sum, layout); err != nil {
					return err
				}
				return judge(out, sum, gates)
			}
			sum, _, err := renderDir(cmd.Context(), table, dir, opt)
			if err != nil {
				return &exitError{ExitFailure, err}
			}
			if err := printLayout(out, sum, layout); err != nil {
				return err
			}
			return judge(out, sum, gates)
		},
	}
	cmd.Flags().BoolVar(&fromSummary, "from-summary", false, "render the reports from DIR/summary.json alone, without analysing the trials again (the analysis flags do not apply)")
	cmd.Flags().StringArrayVar(&gateTexts, "fail-on", nil, "exit 4 when a variant's change against the baseline lies beyond a threshold, e.g. 'cpu_per_request > +10%' (repeatable)")
	cmd.Flags().StringVar(&layout, "layout", "", "print the run laid out as this published benchmark laid out its tables, as Markdown: "+strings.Join(scenario.ReportLayouts(), ", "))
	addRenderFlags(cmd.Flags(), &opt)
	cmd.Flags().BoolVar(&opt.excludeFlagged, "exclude-flagged", false, "leave flagged trials out of the comparison (they are still shown)")
	cmd.Flags().BoolVar(&opt.includeInterrupted, "include-interrupted", false, "keep trials cut short (interrupted) in the comparison (by default they are left out, and still shown)")
	return cmd
}

// printLayout writes the run laid out as layout names, if it names one.
func printLayout(w io.Writer, sum *analyze.Summary, layout string) error {
	if layout == "" || sum == nil {
		return nil
	}
	if err := report.LayoutMarkdown(w, sum, layout); err != nil {
		return &exitError{ExitFailure, err}
	}
	return nil
}

// reportMemoryLimit is the heap toll report asks the Go collector to stay
// under (a soft limit: it collects more often near it, never fails), so
// that the collector's default pace does not let a large report's heap
// double before collecting. With --from-summary it hardly matters any
// more: summary.json is decoded as a stream, the live heap is the decoded
// series (some 60 MB for a day of three variants), and a day renders at
// about the same peak with the limit off (GOMEMLIMIT=off) as with it
// (docs/benchmarks.md, "A day's report").
const reportMemoryLimit = 200 << 20

// softMemoryLimit sets reportMemoryLimit, unless GOMEMLIMIT sets one.
func softMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(reportMemoryLimit)
	}
}

// renderSummary rewrites a results directory's reports from its
// summary.json alone, decoded as a stream (a day's is hundreds of MB).
func renderSummary(dir *record.Dir) (*analyze.Summary, error) {
	path := filepath.Join(dir.Path, "summary.json")
	f, err := dir.Open("summary.json")
	if err != nil {
		return nil, err
	}
	sum, err := report.ReadSummary(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := report.WriteRendered(dir, sum); err != nil {
		return sum, err
	}
	return sum, nil
}
