package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/netns"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/report"
	"github.com/tollperf/toll/run"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/stats"
)

// runFlags are the options of `toll run`.
type runFlags struct {
	out            string
	seed           int64
	aa             bool
	control        bool
	render         renderOptions
	noCgroup       bool
	stopGrace      time.Duration
	quiet          bool
	stopNow        <-chan struct{} // not a flag: closed on a second interrupt
	isolateNetwork bool
	kube           kubeFlags
	kubeImages     kubeImages
	findMax        bool
	sloP99         time.Duration
	resume         string
	// gates are the --fail-on thresholds, as written.
	gates []string
	// gateList is gates parsed.
	gateList []analyze.Gate
	// json prints the summary as JSON on stdout (--json), everything else
	// on stderr.
	json    bool
	startup bool
	// profile samples every measured service's stacks (--profile).
	profile bool
	// asyncProfiler is libasyncProfiler.so's path (--async-profiler),
	// pySpy py-spy's (--py-spy).
	asyncProfiler, pySpy string
	// short replaces the scenario's rounds, warm-up, window and restart
	// policy (--rounds, --warmup, --duration, --restart): its short
	// version.
	short scenario.Overrides
	// vars are --set's KEY=VALUE placeholders of the user's own.
	vars []string
	// history is where the run is recorded (--history), with labels
	// (--label).
	history string
	labels  []string
	// curve runs the load steps of a cost curve (--curve) up to upTo
	// requests a second (--up-to; default the scenario's top rate).
	curve bool
	upTo  float64
}

// newRunCmd returns `toll run`; stopNow is closed on a second interrupt,
// to kill the services without their grace period.
func newRunCmd(stopNow <-chan struct{}) *cobra.Command {
	f := runFlags{stopNow: stopNow}
	var rounds int
	var warmup, duration time.Duration
	var restart string
	var starts int
	var precision string
	var budget time.Duration
	cmd := &cobra.Command{
		Use:   "run FILE | run --resume DIR",
		Short: "Run a scenario: baseline and variants under identical load, then report",
		Long: `Run a scenario: its baseline and every variant under identical load, in rounds,
then analyse the trials and write the reports into the results directory.

With --fail-on, each variant is judged against the baseline of the same run:
toll exits 4 when a variant's whole 95% interval of the change lies beyond the
threshold (an interval that only reaches it passes). In GitHub Actions
(GITHUB_ACTIONS=true) failed gates and an invalid run are ::error::
annotations; when $GITHUB_STEP_SUMMARY is set, the report and the gates are
appended to it as Markdown.

` + exitCodesHelp,
		Example: `  toll run examples/quickstart.yaml
  toll run examples/quickstart.yaml --out /tmp/qs --seed 7
  toll run --aa examples/quickstart.yaml      # baseline against itself: the noise floor
  toll run --isolate-network examples/quickstart.yaml  # nothing leaves the machine (root)
  toll run --find-max --slo-p99 50ms examples/quickstart.yaml  # each variant's highest rate within the SLO
  toll run --resume results/quickstart-20261123T101500Z   # finish an interrupted run
  toll run examples/quickstart.yaml --fail-on 'cpu_per_request > +10%'  # exit 4 when a variant costs more
  toll run --startup examples/java/agents.yaml   # cold starts of each variant: time to ready, JVM and CPU
  toll run examples/reproductions/sermant.yaml --rounds 2 --warmup 1s --duration 3s  # a scenario's short version`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.resume != "" {
				if len(args) > 0 {
					return fmt.Errorf("--resume continues the run in %s with the scenario it ran; give no FILE", f.resume)
				}
				return nil
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) > 0 {
				file = args[0]
			}
			fl := cmd.Flags()
			if fl.Changed("rounds") {
				f.short.Rounds = &rounds
			}
			if fl.Changed("warmup") {
				f.short.Warmup = &warmup
			}
			if fl.Changed("duration") {
				f.short.Duration = &duration
			}
			if fl.Changed("restart") {
				f.short.Restart = &restart
			}
			if fl.Changed("starts") {
				f.short.Starts = &starts
			}
			if fl.Changed("precision") {
				pct, err := scenario.ParsePercent(precision)
				if err != nil {
					return &exitError{ExitUsage, fmt.Errorf("--precision: %w", err)}
				}
				f.short.Precision = &pct
			}
			if fl.Changed("budget") {
				f.short.Budget = &budget
			}
			if err := f.ownSettings(file); err != nil {
				return err
			}
			if f.kube.on {
				seq, err := kubeSequential(fl, f.short.Sequential)
				if err != nil {
					return &exitError{ExitUsage, err}
				}
				f.short.Sequential = seq
			}
			return runScenario(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), file, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.profile, "profile", false, "sample every measured service's on-CPU stacks in each window (a JVM with async-profiler, Python with py-spy, the rest with Linux perf) and report where each variant's added CPU per request goes, function by function (profiles/<variant>.pb.gz per request)")
	fl.StringVar(&f.asyncProfiler, "async-profiler", os.Getenv("TOLL_ASYNC_PROFILER"), "`path` of async-profiler's libasyncProfiler.so, loaded into each profiled JVM at its start (default $TOLL_ASYNC_PROFILER; examples/java/fetch-agents.sh fetches it)")
	fl.StringVar(&f.pySpy, "py-spy", "", "`path` of py-spy, which samples each profiled Python service (default: py-spy beside the service's Python, else from PATH)")
	fl.IntVar(&rounds, "rounds", 0, "run this many rounds instead of the scenario's rounds (a short version, e.g. for CI)")
	fl.DurationVar(&warmup, "warmup", 0, "use this warm-up per trial instead of the scenario's load.warmup")
	fl.DurationVar(&duration, "duration", 0, "use this measured window per trial instead of the scenario's load.duration")
	fl.StringVar(&restart, "restart", "", "use this restart policy (once, per-round, per-trial) instead of the scenario's restart")
	fl.IntVar(&starts, "starts", 0, "start the services this many times over the run instead of the scenario's starts (restart: once): its rounds split among the starts")
	fl.StringVar(&precision, "precision", "", "run rounds until every primary cost's 95% interval is this precise, e.g. 3% (precision mode, in place of the scenario's rounds)")
	fl.DurationVar(&budget, "budget", 0, "the longest a run in precision mode may take (default: the scenario's precision.budget, or 10m)")
	fl.BoolVar(&f.short.Sequential, "sequential", false, "run a duet scenario one variant under load at a time instead (mode: sequential): a duet's result checked without its shortcuts (with --kubernetes, default $"+envSequential+")")
	fl.StringVar(&f.out, "out", "", "results directory to create (default results/<scenario>-<UTC time>)")
	f.addOwnFlags(fl)
	fl.Int64Var(&f.seed, "seed", 0, "seed of the random variant order (default: the scenario's, or drawn and recorded)")
	fl.BoolVar(&f.aa, "aa", false, "A/A run: compare the baseline with a second copy of itself to show the noise floor")
	fl.BoolVar(&f.control, "control", false, "add an A/A control (the scenario's control: true): a copy of the baseline run beside the variants, by which every variant's change is corrected")
	fl.BoolVar(&f.render.excludeFlagged, "exclude-flagged", false, "leave flagged trials out of the comparison (they are still shown)")
	fl.BoolVar(&f.render.includeInterrupted, "include-interrupted", false, "keep trials cut short (interrupted) in the comparison (by default they are left out, and still shown)")
	fl.BoolVar(&f.noCgroup, "no-cgroup", false, "read costs from /proc even where cgroups are usable")
	fl.DurationVar(&f.stopGrace, "stop-grace", 5*time.Second, "how long services get between SIGTERM and SIGKILL when they stop (a service whose agent flushes its telemetry at exit may need longer); a second interrupt cuts it short")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print only the headlines and the tables (the files written are whole)")
	fl.BoolVar(&f.json, "json", false, "print the summary (what summary.json holds) as JSON on stdout, and the table and progress on stderr: toll run --json FILE | jq")
	addRenderFlags(fl, &f.render)
	fl.BoolVar(&f.findMax, "find-max", false, "search each variant's highest open-model rate with p99 within the SLO and no errors (doubling, then bisecting), instead of running rounds")
	fl.DurationVar(&f.sloP99, "slo-p99", 0, "with --find-max: the p99 latency a sustainable rate must keep (default: the scenario's find_max.slo_p99, or 100ms)")
	fl.BoolVar(&f.startup, "startup", false, "measure start-up instead of load: start each variant's services from cold startup.repetitions times (default 10), interleaved, and compare the starts (see the scenario's startup:)")
	fl.StringVar(&f.resume, "resume", "", "continue the interrupted run in this results directory: keep its finished trials and run the rest of its plan (same scenario copy, seed and order)")
	fl.StringArrayVar(&f.gates, "fail-on", nil, "exit 4 when a variant's change against the baseline lies beyond a threshold, e.g. 'cpu_per_request > +10%' (repeatable)")
	fl.BoolVar(&f.kube.on, "kubernetes", false, "run the services in a Kubernetes cluster (the scenario's kubernetes: block, the current kubeconfig context) instead of on this machine; see docs/distributed.md")
	f.kube.addFlags(fl)
	f.kubeImages.addFlags(fl)
	fl.BoolVar(&f.isolateNetwork, "isolate-network", false, "run everything (services, load generator, telemetry sinks) in a new network namespace with only loopback, so no traffic leaves the machine; needs root (same as the scenario's network: isolated)")
	return cmd
}

func runScenario(ctx context.Context, stdout, stderr io.Writer, file string, f runFlags) error {
	keepRunningOnBrokenPipe()
	var s *scenario.Scenario
	gates, err := parseGates(f.gates)
	if err != nil {
		return err
	}
	f.gateList = gates
	if f.findMax && len(gates) > 0 {
		return &exitError{ExitUsage, errors.New("--fail-on judges rounds against the baseline; a --find-max search has none")}
	}
	if err := f.render.check(); err != nil {
		return &exitError{ExitUsage, err}
	}
	if f.stopGrace <= 0 {
		return &exitError{ExitUsage, fmt.Errorf("--stop-grace %v: want a positive duration, e.g. 5s", f.stopGrace)}
	}
	if f.resume != "" {
		if f.aa || f.control || f.findMax || f.out != "" || f.seed != 0 || !f.short.Empty() {
			return &exitError{ExitUsage, errors.New("--resume takes the run's own settings: --aa, --control, --find-max, --out, --seed, --rounds, --warmup, --duration, --restart, --starts, --sequential, --precision, --budget and --set do not apply")}
		}
		var m *record.Manifest
		if s, m, err = run.ReadResumable(f.resume); err != nil {
			return &exitError{ExitUsage, err}
		}
		f.aa = m.AA
		f.isolateNetwork = f.isolateNetwork || m.Layout.Network == scenario.NetworkIsolated
	} else if f.startup {
		if !f.short.Empty() {
			return &exitError{ExitUsage, errors.New("--startup runs startup.repetitions starts of each variant: --rounds, --warmup, --duration, --restart, --starts, --sequential, --precision, --budget and --set do not apply")}
		}
		if s, err = scenario.ReadStartup(file); err != nil {
			return &exitError{ExitUsage, err}
		}
		if f.aa {
			s = run.AAScenario(s)
		}
	} else if s, err = scenario.ReadWith(file, f.short); err != nil {
		return &exitError{ExitUsage, err}
	} else if f.aa {
		s = run.AAScenario(s)
	}
	if f.aa && f.control {
		return &exitError{ExitUsage, errors.New("--aa and --control: an A/A run is its own control")}
	}
	if f.control && !s.Control {
		if _, ok := s.Variant(scenario.ControlVariant); ok {
			return &exitError{ExitUsage, fmt.Errorf("--control adds a variant named %q, and %s defines one already; rename it", scenario.ControlVariant, s.Path)}
		}
		s.Control = true
	}
	s = run.ControlScenario(s)
	if f.sloP99 < 0 {
		return &exitError{ExitUsage, fmt.Errorf("--slo-p99 %s is negative", f.sloP99)}
	}
	if f.sloP99 > 0 {
		s.FindMax.SLOP99 = scenario.Duration(f.sloP99)
	}
	b, err := newBackend(s, f)
	if err != nil {
		return err
	}
	if !f.kube.on && (f.isolateNetwork || s.Network == scenario.NetworkIsolated) {
		origin := "--isolate-network"
		if !f.isolateNetwork {
			origin = s.Path + ": network: isolated"
		}
		s.Network = scenario.NetworkIsolated
		if done, err := isolate(ctx, stdout, stderr, origin); done || err != nil {
			return err
		}
	}
	live := !f.quiet && isTerminal(stderr)
	// From here on the output is toll's own (an isolated run passes its
	// descriptors to the toll it starts, above): a reader that goes away
	// ends what is printed, not the run.
	stdout, stderr = &pipeTolerant{w: stdout}, &pipeTolerant{w: stderr}
	stop := make(chan struct{})
	defer close(stop)
	go announceInterrupts(ctx, f.stopNow, stop, stderr)
	progress := stderr
	if f.quiet {
		progress = io.Discard
		f.render.brief = true
	}
	dir, runErr := run.Run(ctx, s, run.Options{Out: f.out, Seed: f.seed, Version: tollVersion(), Backend: b,
		Progress: progress, Live: live, FindMax: f.findMax, Resume: f.resume, AA: f.aa, Finished: func(dir *record.Dir, err error) {
			// A run cut short still has services to stop, which may take
			// their grace period: its reports are written first, and again
			// below once what they flushed as they stopped is counted.
			if err != nil && !f.findMax {
				early := f.render
				early.push, early.benchmark = "", "" // sent once, below
				renderDir(ctx, io.Discard, dir, early)
			}
		}})
	if dir == nil {
		if _, ok := errors.AsType[*run.ResumeError](runErr); ok {
			return &exitError{ExitUsage, runErr}
		}
		if errors.Is(runErr, run.ErrInterrupted) {
			return &exitError{ExitInterrupted, runErr}
		}
		return &exitError{ExitFailure, runErr}
	}
	return finishRun(ctx, stdout, stderr, dir, s.Baseline, runErr, f)
}

// finishRun reports the run carried out into dir (runErr is how it
// ended): it writes the reports into dir, prints the table, judges the
// gates and returns the exit error. With --json the summary (what
// summary.json holds; a --find-max search's findmax.json) is all that goes
// to stdout, and the table, the gates and the results line go to stderr,
// so that `toll run --json FILE | jq` reads a JSON document.
func finishRun(ctx context.Context, stdout, stderr io.Writer, dir *record.Dir, baseline string, runErr error, f runFlags) error {
	text := stdout
	if f.json {
		text = stderr
	}
	if f.findMax {
		fm, err := dir.ReadFindMax()
		if err == nil && fm != nil {
			err = report.FindMaxText(text, analyze.SummarizeFindMax(fm, baseline))
		}
		var written []string
		if fm != nil {
			written = append(written, "findmax.json")
			if f.json && err == nil {
				err = writeJSON(stdout, fm)
			}
		}
		fmt.Fprintf(stderr, "\n%s\n", resultsLine(dir.Path, written))
		switch {
		case runErr != nil && errors.Is(runErr, run.ErrInterrupted):
			return &exitError{ExitInterrupted, runErr}
		case runErr != nil:
			return &exitError{ExitFailure, runErr}
		case err != nil:
			return &exitError{ExitFailure, err}
		}
		return nil
	}
	sum, written, repErr := renderDir(ctx, text, dir, f.render)
	if repErr == nil && f.aa {
		writeNoiseFloor(text, sum)
	}
	if repErr == nil && f.json && sum != nil {
		js, err := report.JSON(sum)
		if err == nil {
			_, err = stdout.Write(js)
		}
		repErr = err
	}
	if repErr == nil && runErr == nil && sum != nil && f.history != "" {
		repErr = recordInHistory(ctx, stderr, f.history, f.labels, dir.Path, sum)
	}
	var judged error
	if repErr == nil && runErr == nil {
		judged = judge(text, sum, f.gateList)
	}
	fmt.Fprintf(stderr, "\n%s\n", resultsLine(dir.Path, written))
	switch {
	case runErr != nil && errors.Is(runErr, run.ErrInterrupted):
		return &exitError{ExitInterrupted, runErr}
	case runErr != nil:
		return &exitError{ExitFailure, runErr}
	case repErr != nil:
		return &exitError{ExitFailure, repErr}
	}
	return judged
}

// judge finishes toll run and toll report on a run that was carried out:
// it judges the gates against the baseline when the run is valid, prints
// their outcome, annotates an invalid run and failed gates for GitHub
// Actions, appends the report and the gates to $GITHUB_STEP_SUMMARY, and
// returns the exit error: an invalid run (3) before a failed gate (4).
func judge(w io.Writer, sum *analyze.Summary, gates []analyze.Gate) error {
	if sum == nil {
		return nil
	}
	gh := githubFromEnv(w)
	var results []analyze.GateResult
	if sum.Valid() && sum.Partial == nil {
		for _, g := range gates {
			results = append(results, g.CheckRun(sum))
		}
	}
	if err := gh.summary(func(sw io.Writer) error {
		if err := report.Markdown(sw, sum); err != nil {
			return err
		}
		return report.GatesMarkdown(sw, results)
	}); err != nil {
		return &exitError{ExitFailure, err}
	}
	if !sum.Valid() {
		for _, why := range report.InvalidTexts(sum) {
			gh.annotation("error", "toll: invalid run", why)
		}
		if len(gates) > 0 {
			fmt.Fprintln(w, "  gates not judged: the run is not valid")
		}
		return invalid(sum)
	}
	if err := partialGates(w, gh, "the run", sum, gates); err != nil {
		return err
	}
	gh.gates(results)
	if err := report.GatesText(w, results); err != nil {
		return &exitError{ExitFailure, err}
	}
	return gatesFailed(results)
}

// resultsLine names the results directory and the files written into it.
func resultsLine(dir string, written []string) string {
	if len(written) == 0 {
		return fmt.Sprintf("results: %s (no report written)", dir)
	}
	return fmt.Sprintf("results: %s (%s)", dir, strings.Join(written, ", "))
}

// invalid returns the exit error of a run whose measurement analyze found
// not valid, and nil for a valid one.
func invalid(sum *analyze.Summary) error {
	if sum == nil || sum.Valid() {
		return nil
	}
	return &exitError{ExitInvalid, fmt.Errorf("invalid run: %s", strings.Join(report.InvalidTexts(sum), "; "))}
}

// isolate makes sure the run happens in a network namespace that holds only
// loopback. In toll as the user started it, it runs toll again in a new
// namespace, passes SIGINT and SIGTERM on to it and returns its outcome with
// done set. In that re-executed toll, or in a toll started inside such a
// namespace already, it brings loopback up and returns done unset: the run
// goes on here. origin names what asked for isolation, for errors.
func isolate(ctx context.Context, stdout, stderr io.Writer, origin string) (done bool, err error) {
	child := netns.Reexeced()
	ok, _, err := netns.Isolated()
	if err != nil {
		return false, &exitError{ExitFailure, fmt.Errorf("%s: %w", origin, err)}
	}
	if ok || child {
		if err := netns.Setup(); err != nil {
			return false, &exitError{ExitFailure, fmt.Errorf("%s: %w", origin, err)}
		}
		return false, nil
	}
	// The re-executed toll handles signals as toll does (the first stops
	// the run gracefully, the second kills its services at once, and it
	// writes its report either way); this one only passes them on, and
	// returns once it has exited. If this toll is killed, the other dies
	// with it (parent-death signal), and its services with it.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	code, err := netns.Reexec(ctx, netns.Stdio{In: os.Stdin, Out: stdout, Err: stderr}, sigs)
	if err != nil {
		return true, &exitError{ExitFailure, fmt.Errorf("%s: %w", origin, err)}
	}
	if code != ExitOK {
		return true, exitCode(code) // the re-executed toll has said why
	}
	return true, nil
}

// announceInterrupts says what toll run does about an interrupt (ctx done)
// and a second one (stopNow closed), until stop is closed.
func announceInterrupts(ctx context.Context, stopNow, stop <-chan struct{}, w io.Writer) {
	select {
	case <-ctx.Done():
		fmt.Fprintln(w, "\ntoll: interrupted; stopping services and writing what was measured (again to kill the services at once)")
	case <-stop:
		return
	}
	select {
	case <-stopNow:
		fmt.Fprintln(w, "\ntoll: interrupted again; killing the services now, then writing what was measured")
	case <-stop:
	}
}

// renderOptions are the options of the analysis and reports that `toll run`
// and `toll report` share.
type renderOptions struct {
	excludeFlagged     bool
	includeInterrupted bool
	// push is a Pushgateway URL to push the summary's metrics to.
	push string
	// benchmark is a file to write github-action-benchmark's
	// customSmallerIsBetter JSON to, or "".
	benchmark string
	// seriesEvery, when positive, adds to report.md a table of each step's
	// figures every so many seconds.
	seriesEvery time.Duration
	// brief prints only the headlines and the tables in the terminal
	// (toll run -q); the files written are whole.
	brief bool
}

// maxSeriesEvery bounds --series-every: a span longer than a day is longer
// than any trial's window (at most a day), so the table would have one row.
const maxSeriesEvery = 24 * time.Hour

// check refuses render options that cannot be honoured, before a run starts.
func (o renderOptions) check() error {
	if o.seriesEvery != 0 && (o.seriesEvery < time.Second || o.seriesEvery%time.Second != 0 || o.seriesEvery > maxSeriesEvery) {
		return fmt.Errorf("--series-every %s: want whole seconds from 1s to 24h (the series are per second, and a window is at most a day)", o.seriesEvery)
	}
	return nil
}

// addRenderFlags adds the flags of renderOptions that toll run and toll
// report share.
func addRenderFlags(fl *pflag.FlagSet, opt *renderOptions) {
	fl.StringVar(&opt.push, "push", "", "also push the summary's metrics to this Prometheus Pushgateway URL (grouped by scenario and run)")
	fl.DurationVar(&opt.seriesEvery, "series-every", 0, "also render each load step's per-second series as a table of spans this long (e.g. 5s: CPU and throughput every 5 s); series.csv always has every second")
	fl.StringVar(&opt.benchmark, "benchmark-json", "", "also write each variant's overhead ratios to this file as github-action-benchmark customSmallerIsBetter JSON")
}

// renderDir analyses a results directory, writes its reports and prints the
// terminal summary. It returns the summary (nil when there is none), the
// names of the files it wrote and its error.
func renderDir(ctx context.Context, w io.Writer, dir *record.Dir, opt renderOptions) (*analyze.Summary, []string, error) {
	m, err := dir.ReadManifest()
	if err != nil {
		return nil, nil, err
	}
	if fm, err := dir.ReadFindMax(); err != nil || fm != nil {
		if err != nil {
			return nil, nil, err
		}
		// A search's trials are one per rate, not rounds to compare.
		return nil, nil, report.FindMaxText(w, analyze.SummarizeFindMax(fm, m.Baseline))
	}
	trials, unreadable, err := dir.ReadTrials()
	if err != nil {
		return nil, nil, err
	}
	sum, err := analyze.Summarize(m, trials, analyze.Options{
		Unreadable:         unreadable,
		Trim:               analyze.Trim{Start: m.TrimStartS, End: m.TrimEndS},
		ExcludeFlagged:     opt.excludeFlagged,
		IncludeInterrupted: opt.includeInterrupted,
		SeriesEvery:        opt.seriesEvery.Seconds(),
	})
	switch {
	case len(trials) == 0 && sum != nil && sum.Partial != nil:
		return nil, nil, fmt.Errorf("%s holds no finished trial: %s", dir.Path, report.PartialText(sum.Partial))
	case len(trials) == 0:
		return nil, nil, fmt.Errorf("%s holds no finished trial", dir.Path)
	case err != nil && (sum == nil || len(sum.Trials) > 0):
		return nil, nil, fmt.Errorf("analyse %s: %w", dir.Path, err)
	}
	if sum != nil {
		if err := analyze.AddProfiles(sum, trials, dir.ReadProfile); err != nil {
			return nil, nil, fmt.Errorf("analyse %s: profiles: %w", dir.Path, err)
		}
	}
	// With trial files none of which could be analysed (all cut short
	// before their window, say) the reports are still written: they say
	// why, and what the run is missing.
	written, err := report.WriteAll(dir, sum)
	if err != nil {
		return sum, written, err
	}
	if opt.benchmark != "" {
		var b bytes.Buffer
		if err := report.BenchmarkJSON(&b, sum); err != nil {
			return sum, written, err
		}
		if err := os.WriteFile(opt.benchmark, b.Bytes(), 0o644); err != nil {
			return sum, written, fmt.Errorf("--benchmark-json: %w", err)
		}
	}
	if opt.push != "" {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := report.Push(pctx, opt.push, sum); err != nil {
			return sum, written, err
		}
	}
	if opt.brief {
		return sum, written, report.Brief(w, sum)
	}
	return sum, written, report.Text(w, sum)
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeNoiseFloor explains what an A/A run says about this machine.
func writeNoiseFloor(w io.Writer, s *analyze.Summary) {
	for _, st := range s.Steps {
		for _, v := range st.Variants {
			for _, c := range v.Costs {
				if c.Cost != analyze.CPUPerRequest || c.Delta == nil || c.Delta.CILow == nil {
					continue
				}
				half := (*c.Delta.CIHigh - *c.Delta.CILow) / 2
				fmt.Fprintf(w, "\n  Noise floor at %s (A/A, %d rounds): CPU per request %s.\n", st.Label(), c.Delta.N, report.DeltaPct(analyze.Info(c.Cost), c.Delta))
				fmt.Fprintf(w, "  A real overhead of about ±%.1f%% would be detected (CI excluding 0) half the time with this many rounds;\n", half)
				fmt.Fprintf(w, "  about ±%.1f%% would be detected 4 times in 5. More rounds narrow this as 1/√rounds.\n", stats.Detectable(half, 0.8))
			}
		}
	}
}

// isTerminal says whether w is a terminal (then progress is a live line).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// addOwnFlags adds the flags that shape a run beyond the file's short
// version: a cost curve's steps, the file's own placeholders, a history.
func (f *runFlags) addOwnFlags(fl *pflag.FlagSet) {
	fl.BoolVar(&f.curve, "curve", false, "run the load steps of a cost curve in place of the scenario's rates: idle, then five rates evenly up to --up-to; the report gives each variant's fixed part and part per request, and toll cost the bill at your load")
	fl.Float64Var(&f.upTo, "up-to", 0, "with --curve: the top rate in requests a second (default: the scenario's highest rate)")
	fl.StringArrayVar(&f.vars, "set", nil, "fill in the scenario's placeholder ${KEY} with VALUE, KEY=VALUE (repeatable): one file for every version of an agent")
	fl.StringVar(&f.history, "history", "", "also record the run in this history, a SQLite file or a postgres:// URL (toll history; docs/history.md)")
	fl.StringArrayVar(&f.labels, "label", nil, "with --history: a label of the run, KEY=VALUE (repeatable): the agent's version, the application's commit, the branch")
}

// ownSettings reads the flags addOwnFlags added, before anything starts.
func (f *runFlags) ownSettings(file string) error {
	if len(f.vars) > 0 {
		vars, err := parseLabels(f.vars)
		if err != nil {
			return &exitError{ExitUsage, fmt.Errorf("--set: %w", err)}
		}
		f.short.Vars = vars
	}
	if err := f.curveRates(file); err != nil {
		return err
	}
	if _, err := parseLabels(f.labels); err != nil {
		return &exitError{ExitUsage, err}
	}
	if len(f.labels) > 0 && f.history == "" {
		return &exitError{ExitUsage, errors.New("--label labels the run in a history: give --history too")}
	}
	return nil
}

// curveRates sets the cost curve's load steps (--curve) from --up-to or
// the scenario's highest rate.
func (f *runFlags) curveRates(file string) error {
	if !f.curve {
		if f.upTo != 0 {
			return &exitError{ExitUsage, errors.New("--up-to is the top rate of --curve: give --curve too")}
		}
		return nil
	}
	if f.resume != "" || f.findMax || f.startup {
		return &exitError{ExitUsage, errors.New("--curve runs a cost curve's load steps: not with --resume, --find-max or --startup")}
	}
	top := f.upTo
	if top == 0 {
		s, err := scenario.ReadWith(file, scenario.Overrides{Vars: f.short.Vars})
		if err != nil {
			return &exitError{ExitUsage, err}
		}
		if top = s.Load.TopRate(); top == 0 {
			return &exitError{ExitUsage, fmt.Errorf("%s: --curve steps the open model's rate, and the scenario has none above 0: give --up-to", file)}
		}
	}
	rates, err := scenario.CurveRates(top)
	if err != nil {
		return &exitError{ExitUsage, err}
	}
	f.short.Rates = rates
	return nil
}
