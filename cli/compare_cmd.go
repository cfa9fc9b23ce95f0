package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/report"
)

// newCompareCmd returns `toll compare DIR_A DIR_B`.
func newCompareCmd() *cobra.Command {
	var gates []string
	var excludeFlagged, asJSON bool
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Compare two results directories (before/after a change) and gate on the difference",
		Long: `Compares each variant's overhead against the baseline between two runs of the
same scenario, e.g. two releases of an agent. With --fail-on, exits with 4 when
a change's whole 95% interval lies beyond the threshold; an interval that only
reaches it passes. A partial run (interrupted, killed, trials missing or
unreadable) is said; with --fail-on its gates are not judged, and toll exits 5. With --json, the comparison and the gates' outcome are
written to stdout as JSON (docs/results-schema.md) instead of the table.

When both runs were profiled (profile: true, toll run --profile), it also shows,
per variant, the functions, packages and origins whose added CPU per request
moved most between the runs (docs/profiling.md).

In GitHub Actions (GITHUB_ACTIONS=true) every failed gate is also an ::error::
annotation; when $GITHUB_STEP_SUMMARY is set, the table and the gates are
appended to it as Markdown.

` + exitCodesHelp,
		Example: `  toll compare results/agents-v1 results/agents-v2
  toll compare old new --fail-on 'cpu_per_request > +5%' --fail-on 'p99 > +10%'
  toll compare old new --json > comparison.json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			gs, err := parseGates(gates)
			if err != nil {
				return err
			}
			var sums [2]*analyze.Summary
			for i, path := range args {
				s, err := summarizeDir(path, excludeFlagged)
				if err != nil {
					return &exitError{ExitUsage, err}
				}
				sums[i] = s
			}
			rc, err := analyze.CompareRuns(sums[0], sums[1])
			if err != nil {
				return &exitError{ExitUsage, fmt.Errorf("compare %s and %s: %w", args[0], args[1], err)}
			}
			partial := sums[0].Partial != nil || sums[1].Partial != nil
			var results []analyze.GateResult
			if !partial {
				for _, g := range gs {
					results = append(results, g.Check(rc))
				}
			}
			out, msgs := cmd.OutOrStdout(), cmd.OutOrStdout()
			if asJSON {
				// stdout holds the document alone.
				msgs = cmd.ErrOrStderr()
				err = report.CompareJSON(out, rc, args[0], args[1], results)
			} else {
				err = report.CompareText(out, rc, args[0], args[1])
			}
			if err != nil {
				return &exitError{ExitFailure, err}
			}
			gh := githubFromEnv(msgs)
			if err := gh.summary(func(w io.Writer) error { return report.CompareMarkdown(w, rc, args[0], args[1], results) }); err != nil {
				return &exitError{ExitFailure, err}
			}
			// A partial run is said whether or not gates were given; with
			// gates, they are not judged and the comparison fails.
			var unjudged error
			for i, s := range sums {
				if s.Partial == nil {
					continue
				}
				fmt.Fprintf(msgs, "  ! %s: %s\n", args[i], s.Partial.Text)
				if err := partialGates(msgs, gh, args[i], s, gs); err != nil && unjudged == nil {
					unjudged = err
				}
			}
			if unjudged != nil {
				return unjudged
			}
			gh.gates(results)
			if err := report.GatesText(msgs, results); err != nil {
				return &exitError{ExitFailure, err}
			}
			return gatesFailed(results)
		},
	}
	cmd.Flags().StringArrayVar(&gates, "fail-on", nil, "exit 4 when a cost's change lies beyond a threshold, e.g. 'cpu_per_request > +5%' (repeatable)")
	cmd.Flags().BoolVar(&excludeFlagged, "exclude-flagged", false, "leave flagged trials out of both runs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "write the comparison and the gates' outcome to stdout as JSON instead of the table")
	return cmd
}

// summarizeDir analyses a results directory, its profiles included,
// without writing anything.
func summarizeDir(path string, excludeFlagged bool) (*analyze.Summary, error) {
	dir, err := record.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := dir.ReadManifest()
	if err != nil {
		return nil, err
	}
	trials, unreadable, err := dir.ReadTrials()
	if err != nil {
		return nil, err
	}
	sum, err := analyze.Summarize(m, trials, analyze.Options{Unreadable: unreadable, Trim: analyze.Trim{Start: m.TrimStartS, End: m.TrimEndS}, ExcludeFlagged: excludeFlagged})
	if err != nil || sum == nil {
		return sum, err
	}
	// As toll report does: where each variant's added CPU per request
	// goes, for the comparison of the two runs' profiles.
	if err := analyze.AddProfiles(sum, trials, dir.ReadProfile); err != nil {
		return nil, fmt.Errorf("analyse %s: profiles: %w", path, err)
	}
	return sum, nil
}

// appendFile appends what write produces to the file at path.
func appendFile(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
