package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/changepoint"
	"github.com/tollperf/toll/history"
	"github.com/tollperf/toll/report"
)

// historyOptions are the flags every history command shares.
type historyOptions struct {
	db       string
	scenario string
	labels   []string
	// order is the label whose values, as versions, order the runs (by
	// when they started when empty).
	order string
}

func (o *historyOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.db, "db", "", "the history: a SQLite file, or a postgres:// URL (default $TOLL_HISTORY, else ~/.local/share/toll/history.db)")
	cmd.Flags().StringVar(&o.scenario, "scenario", "", "only this scenario's runs")
	cmd.Flags().StringArrayVar(&o.labels, "label", nil, "only runs with this label, KEY=VALUE (repeatable)")
}

// where is the history to open: --db, $TOLL_HISTORY, or the user's data
// directory.
func (o *historyOptions) where() (string, error) {
	if o.db != "" {
		return o.db, nil
	}
	if env := os.Getenv("TOLL_HISTORY"); env != "" {
		return env, nil
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no --db, no $TOLL_HISTORY, and no home directory to keep the history in: %w", err)
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "toll", "history.db"), nil
}

// parseLabels reads KEY=VALUE pairs.
func parseLabels(texts []string) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range texts {
		k, v, ok := strings.Cut(t, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--label %q: want KEY=VALUE, e.g. agent=2.10.0", t)
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// open opens the history the flags name and the filter they set.
func (o *historyOptions) open(cmd *cobra.Command) (*history.Store, history.Filter, error) {
	labels, err := parseLabels(o.labels)
	if err != nil {
		return nil, history.Filter{}, &exitError{ExitUsage, err}
	}
	where, err := o.where()
	if err != nil {
		return nil, history.Filter{}, &exitError{ExitUsage, err}
	}
	st, err := history.Open(cmd.Context(), where)
	if err != nil {
		return nil, history.Filter{}, &exitError{ExitFailure, err}
	}
	return st, history.Filter{Scenario: o.scenario, Labels: labels}, nil
}

// newHistoryCmd returns `toll history`: an agent's overhead over runs.
func newHistoryCmd() *cobra.Command {
	var o historyOptions
	var costs []string
	var variant, htmlPath string
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Follow each variant's overhead over recorded runs, and find where it changed",
		Long: `Lists the history's series, a cost of a variant at a load step over the runs
of one scenario on machines of one fingerprint (CPU model, cores, kernel,
cgroup version: runs of different machines are never mixed), oldest first,
each run's change against its baseline with its 95% interval; and marks each
change of level found in the series, with its size, its interval and the
labels that changed there (docs/history.md). Runs are recorded by
toll run --history, or by toll history add for results directories.

By default CPU per request and every series with a change of level are shown;
--cost chooses costs, --all shows every series. --html writes a page that
charts each series, every run linking to its report. --order version lists
the runs by their version label rather than by when they started (a
bisect's runs, or a release measured again later).

` + exitCodesHelp,
		Example: `  toll history add results/otel-2.10 --label agent=2.10.0
  toll history --scenario java-agent --cost cpu_per_request --html history.html
  toll history --db bisect.db --order version
  toll history check --fail-on 'cpu_per_request > +2%'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			series, err := o.series(cmd)
			if err != nil {
				return err
			}
			series, err = chooseSeries(series, variant, costs, all)
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			if htmlPath != "" {
				if err := writeHistoryHTML(htmlPath, series); err != nil {
					return &exitError{ExitFailure, err}
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Series []*history.Series `json:"series"`
				}{series})
			}
			return report.HistoryText(cmd.OutOrStdout(), series)
		},
	}
	o.flags(cmd)
	cmd.Flags().StringArrayVar(&costs, "cost", nil, "only this cost, as gates name it (cpu_per_request, rss, p99; repeatable)")
	cmd.Flags().StringVar(&variant, "variant", "", "only this variant")
	cmd.Flags().BoolVar(&all, "all", false, "every series, not only CPU per request and those that changed")
	cmd.Flags().StringVar(&htmlPath, "html", "", "also write a page charting each series to this file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "write the series as JSON instead of the tables")
	cmd.Flags().StringVar(&o.order, "order", "", "order the runs by this label's values, as versions (1.9 before 1.10), not by when they started")
	cmd.AddCommand(newHistoryAddCmd(), newHistoryCheckCmd())
	return cmd
}

// series reads the runs the flags choose and groups them into series.
func (o *historyOptions) series(cmd *cobra.Command) ([]*history.Series, error) {
	st, f, err := o.open(cmd)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	runs, err := st.Runs(cmd.Context(), f)
	if err != nil {
		return nil, &exitError{ExitFailure, err}
	}
	if o.order != "" {
		history.OrderBy(runs, o.order)
	}
	return history.Trends(runs, changepoint.Options{}), nil
}

// chooseSeries keeps the series of variant (all when empty) and of the
// named costs; with none named, CPU per request and every series with a
// change of level, or all of them.
func chooseSeries(series []*history.Series, variant string, costs []string, all bool) ([]*history.Series, error) {
	var want []analyze.Cost
	for _, c := range costs {
		g, err := analyze.ParseGate(c + " > 0%")
		if err != nil {
			return nil, fmt.Errorf("--cost %q: %w", c, errors.Unwrap(err))
		}
		want = append(want, g.Cost)
	}
	var out []*history.Series
	for _, s := range series {
		switch {
		case variant != "" && s.Variant != variant:
		case len(want) > 0 && !slices.Contains(want, analyze.Cost(s.Cost)):
		case len(want) == 0 && !all && s.Cost != string(analyze.CPUPerRequest) && len(s.Changes) == 0:
		default:
			out = append(out, s)
		}
	}
	return out, nil
}

// writeHistoryHTML writes the charts' page to path.
func writeHistoryHTML(path string, series []*history.Series) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := report.HistoryHTML(f, "toll history", series); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// newHistoryAddCmd returns `toll history add DIR...`.
func newHistoryAddCmd() *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "add DIR...",
		Short: "Record results directories in the history",
		Long: `Analyses each results directory as toll report does and records every
variant's changes against the baseline, with their intervals, the labels given
(--label agent=2.10.0 --label commit=abc123), the machine's fingerprint and
toll's version. A run recorded already (same scenario, start and seed) is left
as it is.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := o.open(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			labels, _ := parseLabels(o.labels)
			for _, dir := range args {
				if err := recordRun(cmd, st, dir, labels); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.db, "db", "", "the history: a SQLite file, or a postgres:// URL (default $TOLL_HISTORY, else ~/.local/share/toll/history.db)")
	cmd.Flags().StringArrayVar(&o.labels, "label", nil, "a label of the runs, KEY=VALUE (repeatable): the agent's version, the application's commit, the branch")
	return cmd
}

// recordRun analyses the results directory dir and records it in st.
func recordRun(cmd *cobra.Command, st *history.Store, dir string, labels map[string]string) error {
	sum, err := summarizeDir(dir, false)
	if err != nil {
		return &exitError{ExitUsage, fmt.Errorf("history add %s: %w", dir, err)}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	r := history.FromSummary(sum, dir, labels, time.Now())
	id, err := st.Add(cmd.Context(), r)
	switch {
	case errors.Is(err, history.ErrRecorded):
		fmt.Fprintf(cmd.OutOrStdout(), "%s: recorded already, as run %d of %s\n", dir, id, st)
	case err != nil:
		return &exitError{ExitFailure, err}
	default:
		valid := ""
		if !r.Valid {
			valid = " (an invalid or partial run: kept, but in no trend)"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s: recorded as run %d of %s, %d estimates%s\n", dir, id, st, len(r.Estimates), valid)
	}
	return nil
}

// newHistoryCheckCmd returns `toll history check --fail-on GATE`.
func newHistoryCheckCmd() *cobra.Command {
	var o historyOptions
	var gateTexts []string
	var variant string
	cmd := &cobra.Command{
		Use:   "check --fail-on GATE",
		Short: "Fail when the newest run starts a change beyond a threshold",
		Long: `For CI after toll run --history: compares, in every series of a gate's cost,
the newest run's change against the level of the runs since the series' last
change of level, with an interval that carries both and the spread between
runs. Exits 4 when that interval lies wholly beyond a gate's threshold, and 5
when no series of a gate's cost has enough runs to judge (three, the newest
included, each with an interval).

` + exitCodesHelp,
		Example: `  toll history check --scenario java-agent --fail-on 'cpu_per_request > +2%'`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			gates, err := parseGates(gateTexts)
			if err != nil {
				return err
			}
			if len(gates) == 0 {
				return &exitError{ExitUsage, errors.New("--fail-on: at least one gate, e.g. 'cpu_per_request > +2%'")}
			}
			series, err := o.series(cmd)
			if err != nil {
				return err
			}
			return checkNewest(cmd, series, gates, variant)
		},
	}
	o.flags(cmd)
	cmd.Flags().StringArrayVar(&gateTexts, "fail-on", nil, "a gate, COST > +N% (repeatable): fail when the newest run moved the cost beyond N% of the level before it")
	cmd.Flags().StringVar(&variant, "variant", "", "only this variant")
	return cmd
}

// checkNewest judges each gate on the newest run of every series of its
// cost (changes in percent).
func checkNewest(cmd *cobra.Command, series []*history.Series, gates []analyze.Gate, variant string) error {
	out := cmd.OutOrStdout()
	failed, unjudged := false, false
	for _, g := range gates {
		judged := false
		for _, s := range series {
			if s.Cost != string(g.Cost) || s.Unit != "%" || (variant != "" && s.Variant != variant) {
				continue
			}
			sh, ok := s.Newest()
			if !ok {
				fmt.Fprintf(out, "%s: %s at %s: too few runs with an interval to judge the newest\n", g.Text, s.Variant, s.Step)
				continue
			}
			judged = true
			verdict := "passes"
			if sh.Beyond(g.Pct) {
				verdict, failed = "FAILS", true
			}
			fmt.Fprintf(out, "%s %s: %s at %s, run %d moved the cost against its baseline by %+.1f%% [%+.1f%%, %+.1f%%] from the level of the runs before (%+.1f%% → %+.1f%%)\n",
				g.Text, verdict, s.Variant, s.Step, sh.Run, sh.Shift, sh.Low, sh.High, sh.Before, sh.After)
		}
		if !judged {
			unjudged = true
			fmt.Fprintf(out, "%s: not judged: no series of %s with enough runs\n", g.Text, g.Cost)
		}
	}
	switch {
	case failed:
		return &exitError{ExitGate, errors.New("the newest run starts a change beyond a gate")}
	case unjudged:
		return &exitError{ExitUnjudged, errors.New("a gate could not be judged")}
	}
	return nil
}

// recordInHistory records the run in dir, which sum analysed, in the
// history at where (toll run --history).
func recordInHistory(ctx context.Context, w io.Writer, where string, labelTexts []string, dir string, sum *analyze.Summary) error {
	labels, err := parseLabels(labelTexts)
	if err != nil {
		return err
	}
	st, err := history.Open(ctx, where)
	if err != nil {
		return err
	}
	defer st.Close()
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	id, err := st.Add(ctx, history.FromSummary(sum, dir, labels, time.Now()))
	if err != nil && !errors.Is(err, history.ErrRecorded) {
		return err
	}
	fmt.Fprintf(w, "history: recorded as run %d of %s\n", id, st)
	return nil
}
