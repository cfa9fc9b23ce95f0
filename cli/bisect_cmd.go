package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/bisect"
	"github.com/tollperf/toll/history"
	"github.com/tollperf/toll/report"
	"github.com/tollperf/toll/scenario"
)

// bisectFlags are toll bisect's settings.
type bisectFlags struct {
	versions, versionsFile string
	name                   string
	variant, cost          string
	size, precision        string
	budget                 time.Duration
	rounds                 int
	build                  string
	out                    string
	profile                bool
	hist                   historyOptions
	stopNow                <-chan struct{}
}

// newBisectCmd returns `toll bisect FILE`.
func newBisectCmd(stopNow <-chan struct{}) *cobra.Command {
	f := bisectFlags{stopNow: stopNow}
	cmd := &cobra.Command{
		Use:   "bisect FILE --versions V1,V2,…",
		Short: "Find the first version of an agent or application whose cost differs beyond a size",
		Long: `Runs the scenario FILE, which names ${version} (or --name's placeholder) where
the version goes (an agent's jar, an image's tag, a commit), for versions in
the order given, oldest first, and finds the first whose cost differs from the
last good one's by more than --size: a binary search, each step a run in
precision mode (toll run --precision), comparing the variant's change against
its baseline between two versions with both runs' intervals. A comparison
whose interval reaches across the size runs the less precise version again
(at most three runs each); the culprit is confirmed by fresh runs of it and of
the version before it before it is named. --build runs a command for each
version before its first run (building a commit, fetching a jar), with
${version} filled in. Every run's results directory is kept under --out, and
with --history each run is also recorded, labelled version=V (docs/history.md).

Exits 0 when a culprit is named and confirmed, or when the last version is
alike the first; 1 when a comparison could not tell, or the culprit was not
confirmed.`,
		Example: `  toll bisect examples/java/agent-version.yaml --versions-file versions.txt --size 2%
  toll bisect app.yaml --versions v1.4.0,v1.5.0,v1.6.0 --build 'git -C app checkout ${version} && make -C app' --profile`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBisect(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.versions, "versions", "", "the versions, oldest first, comma-separated")
	fl.StringVar(&f.versionsFile, "versions-file", "", "a file of the versions, oldest first, one a line (# starts a comment)")
	fl.StringVar(&f.name, "name", "version", "the placeholder the scenario names the version by: ${NAME}")
	fl.StringVar(&f.variant, "variant", "", "the variant whose change against the baseline is compared (default: the scenario's only variant besides the baseline)")
	fl.StringVar(&f.cost, "cost", "cpu_per_request", "the cost compared, as gates name it")
	fl.StringVar(&f.size, "size", "2%", "the change that counts, in percent of the cost")
	fl.StringVar(&f.precision, "precision", "", "each run's precision target (default: half the size)")
	fl.DurationVar(&f.budget, "budget", 5*time.Minute, "each run's budget in precision mode")
	fl.IntVar(&f.rounds, "rounds", 0, "run this many rounds each time instead of precision mode (a short bisect, when the change is large)")
	fl.StringVar(&f.build, "build", "", "a shell command run for each version before its first run, ${NAME} filled in")
	fl.StringVar(&f.out, "out", "", "the directory every run's results go under (default results/bisect-<scenario>-<UTC time>)")
	fl.BoolVar(&f.profile, "profile", false, "profile every run (toll run --profile) and show where the culprit's added CPU goes")
	fl.StringVar(&f.hist.db, "history", "", "also record every run in this history (a SQLite file or a postgres:// URL)")
	fl.StringArrayVar(&f.hist.labels, "label", nil, "a label of every run recorded, KEY=VALUE (repeatable); version=V is added")
	return cmd
}

// readVersions reads the versions from --versions or --versions-file.
func (f bisectFlags) readVersions() ([]string, error) {
	var vs []string
	switch {
	case f.versions != "" && f.versionsFile != "":
		return nil, errors.New("--versions and --versions-file: give one")
	case f.versions != "":
		for _, v := range strings.Split(f.versions, ",") {
			if v = strings.TrimSpace(v); v != "" {
				vs = append(vs, v)
			}
		}
	case f.versionsFile != "":
		file, err := os.Open(f.versionsFile)
		if err != nil {
			return nil, fmt.Errorf("--versions-file: %w", err)
		}
		defer file.Close()
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			if line = strings.TrimSpace(line); line != "" {
				vs = append(vs, line)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("--versions-file %s: %w", f.versionsFile, err)
		}
	default:
		return nil, errors.New("no versions: give --versions V1,V2,… or --versions-file FILE")
	}
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v] {
			return nil, fmt.Errorf("version %q is listed twice", v)
		}
		seen[v] = true
	}
	if len(vs) < 2 {
		return nil, fmt.Errorf("%d version(s): a bisect needs at least 2", len(vs))
	}
	return vs, nil
}

// bisection is one bisect's state: what it runs and where.
type bisection struct {
	ctx            context.Context
	stdout, stderr io.Writer
	file           string
	f              bisectFlags
	versions       []string
	cost           analyze.Cost
	variant        string
	precision      float64
	out            string
	built          map[int]bool
	runs           map[int][]string // results directories of each version
	store          *history.Store
	labels         map[string]string
}

func runBisect(ctx context.Context, stdout, stderr io.Writer, file string, f bisectFlags) error {
	b, err := newBisection(ctx, stdout, stderr, file, f)
	if err != nil {
		return err
	}
	if b.store != nil {
		defer b.store.Close()
	}
	size, _ := scenario.ParsePercent(f.size)
	each := fmt.Sprintf("each run to ±%g%% within %s", b.precision, f.budget)
	if f.rounds > 0 {
		each = fmt.Sprintf("each run %d rounds", f.rounds)
	}
	fmt.Fprintf(stdout, "bisect: %d versions, %s of %s against its baseline, a change beyond ±%g%% counts; %s; results in %s\n",
		len(b.versions), b.cost, b.variant, size, each, b.out)
	res, err := bisect.Search(ctx, len(b.versions), b.measure, bisect.Options{SizePct: size})
	b.printSteps(res)
	if err != nil {
		return &exitError{ExitFailure, err}
	}
	if res.Culprit < 0 {
		fmt.Fprintf(stdout, "no culprit: %s is alike %s within ±%g%%\n", b.versions[len(b.versions)-1], b.versions[0], size)
		return nil
	}
	good, bad := b.versions[res.LastGood], b.versions[res.Culprit]
	verb := "confirmed by fresh runs of both"
	if !res.Confirmed {
		verb = "NOT confirmed by fresh runs of both"
	}
	fmt.Fprintf(stdout, "culprit: %s (after %s): %s of %s moved by %+.1f%% [%+.1f%%, %+.1f%%] against %s, %s\n",
		bad, good, b.cost, b.variant, res.Change, res.Low, res.High, good, verb)
	if f.profile {
		if err := b.profileDiff(res); err != nil {
			return &exitError{ExitFailure, err}
		}
	}
	if !res.Confirmed {
		return &exitError{ExitFailure, fmt.Errorf("the culprit %s was not confirmed", bad)}
	}
	return nil
}

// newBisection checks the flags and the scenario before anything runs.
func newBisection(ctx context.Context, stdout, stderr io.Writer, file string, f bisectFlags) (*bisection, error) {
	versions, err := f.readVersions()
	if err != nil {
		return nil, &exitError{ExitUsage, err}
	}
	size, err := scenario.ParsePercent(f.size)
	if err != nil || !(size > 0) {
		return nil, &exitError{ExitUsage, fmt.Errorf("--size %q: want a positive percentage such as 2%%", f.size)}
	}
	precision := size / 2
	if f.rounds < 0 || f.rounds > scenario.MaxRounds || (f.rounds > 0 && (f.precision != "" || f.budget != 5*time.Minute)) {
		return nil, &exitError{ExitUsage, fmt.Errorf("--rounds %d: want 1 to %d, and not with --precision or --budget", f.rounds, scenario.MaxRounds)}
	}
	if f.precision != "" {
		if precision, err = scenario.ParsePercent(f.precision); err != nil {
			return nil, &exitError{ExitUsage, fmt.Errorf("--precision: %w", err)}
		}
	}
	g, err := analyze.ParseGate(f.cost + " > 0%")
	if err != nil {
		return nil, &exitError{ExitUsage, fmt.Errorf("--cost %q: %w", f.cost, errors.Unwrap(err))}
	}
	// The scenario must read with the first version in place.
	s, err := scenario.ReadWith(file, scenario.Overrides{Vars: map[string]string{f.name: versions[0]}})
	if err != nil {
		return nil, &exitError{ExitUsage, err}
	}
	variant, err := bisectVariant(s, f.variant)
	if err != nil {
		return nil, &exitError{ExitUsage, err}
	}
	labels, err := parseLabels(f.hist.labels)
	if err != nil {
		return nil, &exitError{ExitUsage, err}
	}
	out := f.out
	if out == "" {
		out = filepath.Join("results", fmt.Sprintf("bisect-%s-%s", s.Name, time.Now().UTC().Format("20060102T150405Z")))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, &exitError{ExitUsage, err}
	}
	b := &bisection{ctx: ctx, stdout: stdout, stderr: stderr, file: file, f: f, versions: versions, cost: g.Cost, variant: variant,
		precision: precision, out: out, built: map[int]bool{}, runs: map[int][]string{}, labels: labels}
	if f.hist.db != "" {
		if b.store, err = history.Open(ctx, f.hist.db); err != nil {
			return nil, &exitError{ExitUsage, err}
		}
	}
	return b, nil
}

// bisectVariant is the variant the bisect follows: the one named, or the
// scenario's only one besides the baseline.
func bisectVariant(s *scenario.Scenario, named string) (string, error) {
	var others []string
	for _, v := range s.Variants {
		if v.Name != s.Baseline {
			others = append(others, v.Name)
		}
	}
	switch {
	case named != "":
		if _, ok := s.Variant(named); !ok || named == s.Baseline {
			return "", fmt.Errorf("--variant %q is not one of %s's variants besides the baseline (%s)", named, s.Path, strings.Join(others, ", "))
		}
		return named, nil
	case len(others) == 1:
		return others[0], nil
	}
	return "", fmt.Errorf("%s has %d variants besides the baseline (%s): name one with --variant", s.Path, len(others), strings.Join(others, ", "))
}

// reSafe is what a results directory's name keeps of a version.
var reSafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// measure runs version i once more and returns its variant's change.
func (b *bisection) measure(ctx context.Context, i int) (bisect.Estimate, error) {
	v := b.versions[i]
	if b.f.build != "" && !b.built[i] {
		if err := b.runBuild(ctx, v); err != nil {
			return bisect.Estimate{}, err
		}
		b.built[i] = true
	}
	dir := filepath.Join(b.out, fmt.Sprintf("%02d-%s-run%d", i+1, reSafe.ReplaceAllString(v, "_"), len(b.runs[i])+1))
	fmt.Fprintf(b.stderr, "bisect: running %s (%s)\n", v, dir)
	budget, rounds := b.f.budget, b.f.rounds
	short := scenario.Overrides{Vars: map[string]string{b.f.name: v}, Precision: &b.precision, Budget: &budget}
	if rounds > 0 {
		short.Precision, short.Budget, short.Rounds = nil, nil, &rounds
	}
	f := runFlags{stopNow: b.f.stopNow, stopGrace: 5 * time.Second, out: dir, quiet: true, profile: b.f.profile, short: short}
	err := runScenario(ctx, io.Discard, b.stderr, b.file, f)
	if ee, ok := errors.AsType[*exitError](err); err != nil && (!ok || ee.code != ExitInvalid) {
		return bisect.Estimate{}, fmt.Errorf("%s: %w", v, err)
	}
	b.runs[i] = append(b.runs[i], dir)
	sum, err := summarizeDir(dir, false)
	if err != nil {
		return bisect.Estimate{}, fmt.Errorf("%s: %w", v, err)
	}
	if b.store != nil {
		labels := map[string]string{b.f.name: v}
		for k, val := range b.labels {
			labels[k] = val
		}
		abs, _ := filepath.Abs(dir)
		if _, err := b.store.Add(ctx, history.FromSummary(sum, abs, labels, time.Now())); err != nil && !errors.Is(err, history.ErrRecorded) {
			return bisect.Estimate{}, err
		}
	}
	return b.estimate(sum, v)
}

// estimate is the followed variant's change of the followed cost in sum,
// as a log-ratio and its standard error, over every load step (the
// first step that has it).
func (b *bisection) estimate(sum *analyze.Summary, v string) (bisect.Estimate, error) {
	for _, st := range sum.Steps {
		for _, vr := range st.Variants {
			if vr.Name != b.variant {
				continue
			}
			for _, c := range vr.Costs {
				d := c.Delta
				if c.Cost != b.cost || d == nil || d.Method != "log-ratio" || d.Pct == nil || d.CILow == nil || d.CIHigh == nil || *d.CILow <= -100 {
					continue
				}
				y, se := history.LogRatio(*d.Pct, *d.CILow, *d.CIHigh)
				return bisect.Estimate{Y: y, SE: se}, nil
			}
		}
	}
	return bisect.Estimate{}, fmt.Errorf("%s: the run has no interval in percent for %s's %s (see its report)", v, b.variant, b.cost)
}

// runBuild runs --build for version v, in the scenario's directory.
func (b *bisection) runBuild(ctx context.Context, v string) error {
	command := strings.ReplaceAll(b.f.build, "${"+b.f.name+"}", v)
	fmt.Fprintf(b.stderr, "bisect: building %s: %s\n", v, command)
	c := exec.CommandContext(ctx, "sh", "-c", command)
	c.Dir = filepath.Dir(b.file)
	c.Stdout, c.Stderr = b.stderr, b.stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("--build for %s: %w", v, err)
	}
	return nil
}

// printSteps prints each comparison the search made.
func (b *bisection) printSteps(res *bisect.Result) {
	if res == nil {
		return
	}
	words := map[bisect.Verdict]string{bisect.Alike: "alike", bisect.Differs: "differs", bisect.Unclear: "cannot tell"}
	for _, st := range res.Steps {
		what, verdict := "compared", words[st.Verdict]
		if st.Confirm {
			what = "confirmed"
		}
		if st.Bad > 0 {
			what = "placed"
			verdict = map[bisect.Verdict]string{bisect.Alike: "at " + b.versions[st.Good] + "'s level", bisect.Differs: "at " + b.versions[st.Bad] + "'s level",
				bisect.Unclear: "between the two levels"}[st.Verdict]
		}
		fmt.Fprintf(b.stdout, "  %s %s against %s: %+.1f%% [%+.1f%%, %+.1f%%], %s (%d and %d runs)\n", what,
			b.versions[st.Candidate], b.versions[st.Good], st.Change, st.Low, st.High, verdict,
			res.Measures[st.Candidate], res.Measures[st.Good])
	}
}

// profileDiff prints where the culprit's added CPU went, comparing the
// newest runs of the last good version and the culprit as toll compare
// does.
func (b *bisection) profileDiff(res *bisect.Result) error {
	good, bad := b.runs[res.LastGood], b.runs[res.Culprit]
	if len(good) == 0 || len(bad) == 0 {
		return nil
	}
	gd, bd := good[len(good)-1], bad[len(bad)-1]
	var sums [2]*analyze.Summary
	for k, d := range []string{gd, bd} {
		s, err := summarizeDir(d, false)
		if err != nil {
			return err
		}
		sums[k] = s
	}
	rc, err := analyze.CompareRuns(sums[0], sums[1])
	if err != nil {
		return err
	}
	return report.CompareText(b.stdout, rc, gd, bd)
}
