package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/report"
	"github.com/tollperf/toll/scenario"
)

// newCompareCmd returns `toll compare DIR_A DIR_B`.
func newCompareCmd() *cobra.Command {
	var gates []string
	var excludeFlagged, asJSON, allowMachines, allowServices bool
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Compare two results directories (before/after a change) and gate on the difference",
		Long: `Compares each variant's overhead against the baseline between two runs of the
same scenario, e.g. two releases of an agent. With --fail-on, exits with 4 when
a change's whole 95% interval lies beyond the threshold; an interval that only
reaches it passes. A partial run (interrupted, killed, trials missing or
unreadable) is said; with --fail-on its gates are not judged, and toll exits 5. With --json, the comparison and the gates' outcome are
written to stdout as JSON (docs/results-schema.md) instead of the table.

The two runs must have run alike: on machines of the same CPU model, core
count, kernel and cgroup version (as each manifest records them), and with
the same services, run by the same commands or images (as each run's copy of
its scenario gives them). Otherwise toll says what differs and exits 6;
--allow-different-machines and --allow-different-services compare them
anyway, and the comparison says so first.

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
			diffs, err := runDifferences(args[0], args[1], sums[0], sums[1])
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			if err := refuseDifferences(diffs, allowMachines, allowServices); err != nil {
				return &exitError{ExitNotAlike, fmt.Errorf("compare %s and %s: %w", args[0], args[1], err)}
			}
			rc, err := analyze.CompareRuns(sums[0], sums[1])
			if err != nil {
				return &exitError{ExitUsage, fmt.Errorf("compare %s and %s: %w", args[0], args[1], err)}
			}
			rc.Differences = diffs
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
				for _, line := range report.DifferenceLines(rc) {
					fmt.Fprintf(msgs, "  ! %s\n", line)
				}
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
				fmt.Fprintf(msgs, "  ! %s: %s\n", args[i], report.PartialText(s.Partial))
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
	cmd.Flags().BoolVar(&allowMachines, "allow-different-machines", false, "compare runs made on machines of another CPU model, core count, kernel or cgroup version (the comparison says so)")
	cmd.Flags().BoolVar(&allowServices, "allow-different-services", false, "compare runs whose services ran by other commands or images (the comparison says so)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "write the comparison and the gates' outcome to stdout as JSON instead of the table")
	return cmd
}

// runDifferences returns how the runs at paths a and b did not run
// alike: their machines, from their manifests, and their services, from
// their copies of the scenario (compared only when both have one).
func runDifferences(a, b string, sa, sb *analyze.Summary) ([]analyze.RunDifference, error) {
	var diffs []analyze.RunDifference
	if sa.Manifest != nil && sb.Manifest != nil {
		diffs = analyze.MachineDifferences(sa.Manifest, sb.Manifest)
	}
	var services [2]map[string]string
	for i, path := range []string{a, b} {
		data, err := readScenarioCopy(filepath.Join(path, "scenario.yaml"))
		if errors.Is(err, fs.ErrNotExist) {
			return diffs, nil // a run recorded before toll kept its scenario
		}
		if err != nil {
			return nil, fmt.Errorf("%s: the run's scenario: %w", path, err)
		}
		if services[i], err = scenario.ServiceCommands(data); err != nil {
			return nil, fmt.Errorf("%s: the run's scenario.yaml: %w", path, err)
		}
	}
	return append(diffs, analyze.ServiceDifferences(services[0], services[1])...), nil
}

// readScenarioCopy reads a results directory's copy of its scenario: a
// regular file (a pipe put in its place would block the read), of at most
// scenario.MaxFileSize bytes.
func readScenarioCopy(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, scenario.MaxFileSize+1))
}

// refuseDifferences returns an error that says what differs between two
// runs, unless every difference is of a kind the user allowed.
func refuseDifferences(diffs []analyze.RunDifference, allowMachines, allowServices bool) error {
	var machine, service []string
	for _, d := range diffs {
		switch {
		case d.Machine() && !allowMachines:
			machine = append(machine, report.DifferenceText(d))
		case !d.Machine() && !allowServices:
			service = append(service, report.DifferenceText(d))
		}
	}
	var parts []string
	if len(machine) > 0 {
		parts = append(parts, "not the same machine ("+strings.Join(machine, "; ")+"; --allow-different-machines compares them anyway)")
	}
	if len(service) > 0 {
		parts = append(parts, "not the same services ("+strings.Join(service, "; ")+"; --allow-different-services compares them anyway)")
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("the runs did not run alike, so the change between them would hold that difference as well as the agent's: %s", strings.Join(parts, "; "))
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
