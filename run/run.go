// Package run carries out a scenario: it plans the run (or a --find-max
// search), creates the results directory and its manifest, carries out
// the plan's starts, trials and stops through the backend it is given
// (backend.Backend: package local on this machine, package kube in a
// cluster, which cli builds), shows the progress, and writes every trial
// to the results directory as soon as it ends, whichever backend measured
// it. It imports no backend.
//
// It is the orchestrator, where the upstream stages meet; it knows nothing
// of reports, nor of how a backend starts services or measures. Of the
// analysis it asks one thing: in precision mode, after each round, whether
// the trials it holds are precise enough to stop (analyze.Decide).
package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/scenario"
)

// Options adjust a run.
type Options struct {
	// Out is the results directory to create; empty means
	// Root/<scenario>-<UTC time>.
	Out string
	// Root is where results directories go (default "results").
	Root string
	// Seed overrides the scenario's seed; 0 keeps it (or draws one).
	Seed int64
	// Version is toll's version, for the manifest.
	Version string
	// Progress receives one line per trial; nil discards them.
	Progress io.Writer
	// Live redraws a status line on Progress every second of a trial (for
	// a terminal: trial i of N, elapsed and ETA, live req/s, p99 and CPU).
	// Without it, Progress gets one plain line per trial (for CI logs).
	Live bool
	// FindMax searches each variant's highest sustainable rate (the
	// scenario's find_max settings) instead of running its rounds.
	FindMax bool
	// Resume is the results directory of an interrupted run of the same
	// scenario (ReadResumable reads it): its finished trials are kept, and
	// the rest of its plan, rebuilt from its seed, is carried out. Out and
	// Seed are ignored.
	Resume string
	// AA records that the scenario is an A/A run (AAScenario), so that a
	// resumed run rebuilds it.
	AA bool
	// Backend runs the services and measures the trials: this machine
	// (local.New) or a Kubernetes cluster (package kube); the plan, the
	// results directory and the trial records are the same. A run needs
	// one, and closes it at its end.
	Backend backend.Backend
	// Finished, when set, is called once the plan has ended, however it
	// ended (err is Run's error), with the manifest written and before the
	// services still running are stopped: stopping may take the grace
	// period, and a supervisor that kills toll soon after SIGTERM (docker
	// stop) must find the report of what finished written already.
	Finished func(dir *record.Dir, err error)
}

// ErrInterrupted is returned (wrapped) when the run was cancelled; the trials
// finished before that are in the results directory.
var ErrInterrupted = errors.New("run interrupted")

// Run carries out s and returns its results directory. The directory is
// returned even with an error when any trial was written.
func Run(ctx context.Context, s *scenario.Scenario, opt Options) (*record.Dir, error) {
	dir, err := run(ctx, s, opt)
	return dir, asInterrupted(ctx, err)
}

// asInterrupted returns err wrapped as ErrInterrupted when ctx was
// cancelled: whatever failed then (a service's readiness wait, a hook, a
// sink's start) failed because the run was interrupted, and the run ends
// as one (exit 130, its finished trials kept), not as a failure.
func asInterrupted(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, ErrInterrupted) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrInterrupted, err)
}

// run is Run, its error not yet read against ctx.
func run(ctx context.Context, s *scenario.Scenario, opt Options) (*record.Dir, error) {
	if opt.Backend == nil {
		return nil, errors.New("run: no backend to run the services (run.Options.Backend)")
	}
	if opt.Root == "" {
		opt.Root = "results"
	}
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	seed := opt.Seed
	if seed == 0 {
		seed = s.Seed
	}
	if seed == 0 {
		seed = rand.Int64N(1<<31) + 1
	}

	s = holdable(s, opt)
	s, adapted := opt.Backend.Adapt(s)
	if err := checkBackend(s, opt); err != nil {
		return nil, err
	}
	var res *resumption
	var dir *record.Dir
	var err error
	if opt.Resume != "" {
		if w := s.Workload(); w != scenario.WorkloadLoad {
			return nil, fmt.Errorf("%s: a %s experiment cannot be resumed yet: run it again (its repetitions are short, and a resumed one would mix two sittings of the machine)", s.Path, w)
		}
		if opt.FindMax {
			return nil, errors.New("--find-max searches cannot be resumed")
		}
		if res, err = openResumption(s, opt.Resume); err != nil {
			return nil, err
		}
		dir, seed = res.dir, res.manifest.Seed
		if res.scenario != nil {
			s = res.scenario
		}
	} else if dir, err = createDir(s, opt); err != nil {
		return nil, err
	}
	id, err := runid.Self()
	if err != nil {
		return dir, err
	}
	// One run writes a directory at a time: toll run --resume of a run
	// still going is refused, naming the run that owns it.
	release, err := dir.Lock(fmt.Sprintf("toll run %s (pid %d)", id, id.Pid))
	if err != nil {
		if res != nil {
			err = &ResumeError{err}
		}
		return nil, err
	}
	defer release()
	r := &runner{s: s, opt: opt, dir: dir, id: id, lastTrial: map[string]*record.Trial{}, trials: map[int]*record.Trial{}}
	if res != nil {
		for _, tr := range res.trials {
			r.trials[tr.Index] = tr
		}
	}
	r.backend, r.can = opt.Backend, abilitiesOf(opt.Backend)
	if adapted != "" {
		r.notes = append(r.notes, adapted)
	}
	m := r.manifest(seed)
	if res != nil {
		m = res.manifest
	}
	defer r.closeAll()
	return dir, r.orchestrate(ctx, seed, m, res)
}

// orchestrate carries out the run through its backend, the same for every
// backend: the backend's set-up, the plan (or a find-max search), the
// manifest, the progress and every trial kept. It records how the run
// ended in the manifest, except when it failed before its first start
// through a backend that leaves no record then
// (backend.Backend.RecordsFailedSetup).
func (r *runner) orchestrate(ctx context.Context, seed int64, m *record.Manifest, res *resumption) error {
	s, dir, opt := r.s, r.dir, r.opt
	// before fails the run before its first start.
	before := func(err error) error {
		if r.backend.RecordsFailedSetup() {
			return r.finish(ctx, m, err)
		}
		return err
	}
	setup := func() error {
		return r.backend.Setup(ctx, backend.Run{Scenario: s, ID: r.id, Dir: dir, Manifest: m, Seed: seed, Events: events{r}})
	}
	if opt.FindMax {
		if s.Workload() != scenario.WorkloadLoad {
			return before(fmt.Errorf("--find-max searches a load test's highest rate; %s is a %s experiment", s.Path, s.Workload()))
		}
		if s.Load.Closed() {
			return before(errors.New("--find-max searches open-model rates: the scenario's load has users (closed model)"))
		}
		if len(s.Matrix.CPUs) > 0 {
			return before(fmt.Errorf("--find-max searches under the services' own limits; %s has a matrix: set each variant's cpu_limit instead", s.Path))
		}
		m.Mode = "find-max"
		r.total = len(s.Variants) * s.FindMax.MaxTrials
		r.planned = r.total
		if err := setup(); err != nil {
			return before(err)
		}
		if err := dir.WriteManifest(m); err != nil {
			return before(err)
		}
		fmt.Fprintf(opt.Progress, "toll: %s: searching each of %d variants' highest rate with p99 <= %s (at most %d trials each)%s, results in %s\n",
			s.Name, len(s.Variants), s.FindMax.SLOP99, s.FindMax.MaxTrials, where(m), dir.Path)
		return r.finish(ctx, m, r.findMax(ctx, seed))
	}
	p := plan.New(s, seed)
	r.total = len(p.Trials())
	r.planned = r.total
	m.Planned = planned(p)
	if err := setup(); err != nil {
		return before(err)
	}
	if res != nil {
		p.Actions = remaining(p.Actions, res.kept, s.Restart == scenario.RestartOnce)
		if s.Precision.On && s.Restart == scenario.RestartOnce {
			resumeLaunches(p.Actions, res.nextLaunch, s.StepsShareStarts())
		}
		all := r.total
		r.total = countTrials(p.Actions)
		m = res.resumed(r.total)
		if s.Precision.On && s.Restart == scenario.RestartOnce {
			for _, n := range res.nextLaunch {
				m.Starts = max(m.Starts, n+1)
			}
		}
		fmt.Fprintf(opt.Progress, "toll: %s: resuming %s: %d of %d trials finished and are kept, %d to run (seed %d)\n",
			s.Name, dir.Path, len(res.kept), all, r.total, seed)
	} else if w := s.Workload(); w != scenario.WorkloadLoad {
		what := map[string]string{scenario.WorkloadStartup: "cold starts", scenario.WorkloadJob: "jobs"}[w]
		fmt.Fprintf(opt.Progress, "toll: %s: %d %s (%d variants × %d repetitions × %d steps)%s, results in %s\n",
			s.Name, r.total, what, len(s.Variants), s.Repetitions(), len(s.Steps()), where(m), dir.Path)
	} else if s.Precision.On {
		fmt.Fprintf(opt.Progress, "toll: %s: rounds of %d variants × %d steps until %s, within %s (precision mode: %s)%s, results in %s\n",
			s.Name, len(s.Variants), len(s.Steps()), targetsText(s), s.Precision.Budget, s.Precision.Why, where(m), dir.Path)
	} else {
		fmt.Fprintf(opt.Progress, "toll: %s: %d trials (%d variants × %d rounds × %d steps)%s, results in %s\n",
			s.Name, r.total, len(s.Variants), s.Rounds, len(s.Steps()), where(m), dir.Path)
	}
	if err := dir.WriteManifest(m); err != nil {
		return before(err)
	}
	var runErr error
	if r.can.preparer != nil {
		runErr = r.can.preparer.Prepare(ctx)
	}
	if runErr == nil {
		runErr = r.execute(ctx, p, m)
	}
	return r.finish(ctx, m, runErr)
}

// where says, in the run's first progress line, where the backend runs
// the services when that is not this machine (m.Layout.Place, which its
// Setup records); nothing otherwise.
func where(m *record.Manifest) string {
	if m.Layout.Place == "" {
		return ""
	}
	return " in " + m.Layout.Place
}

// finish records how the run ended in its manifest and returns runErr (as
// an interruption when ctx was cancelled), or the manifest's own write
// error.
func (r *runner) finish(ctx context.Context, m *record.Manifest, runErr error) error {
	m.Finished = time.Now().UTC()
	runErr = asInterrupted(ctx, runErr)
	if runErr != nil && errors.Is(runErr, ErrInterrupted) {
		m.Interrupted = true
	} else if runErr != nil {
		m.Error = runErr.Error()
	}
	for _, n := range r.notes {
		if !slices.Contains(m.Notes, n) { // a resumed run notes the same facts again
			m.Notes = append(m.Notes, n)
		}
	}
	if err := r.dir.WriteManifest(m); err != nil && runErr == nil {
		runErr = err
	}
	if r.opt.Finished != nil {
		r.opt.Finished(r.dir, runErr)
	}
	return runErr
}

// planned lists the trials of p in the order it runs them, for the manifest.
func planned(p *plan.Plan) []record.PlannedTrial {
	var out []record.PlannedTrial
	for _, t := range p.Trials() {
		out = append(out, record.PlannedTrial{Index: t.Index, Round: t.Round, Order: t.Order, Step: t.Step, Variant: t.Variant, Pair: t.Pair})
	}
	return out
}

// runner holds the state of one run: the orchestrator's (the plan's
// progress, the manifest's notes, the trials kept) and the backend that
// runs the services and measures the trials.
type runner struct {
	s   *scenario.Scenario
	opt Options
	id  runid.ID // labels everything the run creates
	dir *record.Dir
	mu  sync.Mutex // guards done, notes, lastTrial, began and the progress output during trials run at once
	// backend starts and stops the variants and measures their trials
	// (Options.Backend); can is what it does beyond that.
	backend backend.Backend
	can     abilities
	// lastTrial is each variant's latest trial since its services started,
	// whose telemetry cycle ends when they stop (guarded by mu).
	lastTrial map[string]*record.Trial
	total     int // trials this invocation runs
	planned   int // trials of the whole plan, numbered 1 to planned (Index)
	done      int
	began     time.Time // when the first trial started, for the ETA
	// prec tracks a run in precision mode (nil otherwise); its warm-up
	// figures are guarded by mu.
	prec  *precisionRun
	notes []string
	// trials holds every trial record of the results directory by index:
	// a resumed run's from its earlier sittings, then each trial as it is
	// kept (guarded by mu). A run in precision mode analyses them.
	trials map[int]*record.Trial
	// carry holds, by variant, the trial of services started once that a
	// lighter schedule set aside, whose start the variant's next trial
	// records (carryStart; guarded by mu).
	carry map[string]*record.Trial
}

func createDir(s *scenario.Scenario, opt Options) (*record.Dir, error) {
	var dir *record.Dir
	var err error
	if opt.Out != "" {
		dir, err = record.CreateExact(opt.Out)
	} else {
		dir, err = record.Create(opt.Root, s.Name, time.Now())
	}
	if err != nil {
		return nil, err
	}
	// The scenario is code that may carry secrets (its services' env, a
	// load header's token): its copy is its owner's alone.
	if err := dir.WritePrivateFile("scenario.yaml", s.Source); err != nil {
		return nil, err
	}
	return dir, nil
}

// startsOf is what the manifest records of s's starts: none for one.
func startsOf(s *scenario.Scenario) int {
	if s.Starts < 2 {
		return 0
	}
	return s.Starts
}

func (r *runner) manifest(seed int64) *record.Manifest {
	s := r.s
	m := &record.Manifest{
		TollVersion: r.opt.Version, GoVersion: runtime.Version(), Command: commandLine(os.Args), WorkDir: workDir(),
		Scenario: s.Name, ScenarioFile: s.Path, AA: r.opt.AA, Control: controlOf(s), Baseline: s.Baseline, Seed: seed,
		Rounds: s.Repetitions(), Restart: s.Restart, Starts: startsOf(s), Mode: s.Mode, Workload: s.Workload(), Started: time.Now().UTC(), Host: describeHost(),
		Layout: record.Layout{Network: s.Network}, ReportLayout: s.Report.Layout,
		TrimStartS: s.Trim.Start.D().Seconds(), TrimEndS: s.Trim.End.D().Seconds(),
		Load: record.LoadSettings{Model: "open", WarmupS: s.Load.Warmup.D().Seconds(), VariantWarmupS: s.Load.VariantWarmup.D().Seconds(),
			VariantWarmupRate: s.Load.VariantWarmupRate, VariantWarmupUsers: s.Load.VariantWarmupUsers,
			DurationS: s.Load.Duration.D().Seconds(), TimeoutS: s.Load.Timeout.D().Seconds(),
			MaxConns: s.Load.MaxConns, Target: s.Load.Target, SampleS: s.Sample.D().Seconds()},
	}
	cal := record.DefaultCalibration()
	m.Calibration = &cal
	m.Chosen = ChosenSchedule(s)
	if u := s.Load.VariantWarmupUntil; u != nil {
		m.Load.VariantWarmupUntil = &record.WarmupUntil{JITBelowMs: float64(u.JITBelow.D()) / float64(time.Millisecond), OverS: u.Over.D().Seconds()}
		if s.Load.VariantWarmupAuto {
			m.Load.VariantWarmupUntil.Auto, m.Load.VariantWarmupUntil.NoJVMS = true, scenario.DefaultNoJVMWarmup.Seconds()
			m.Load.VariantWarmupUntil.JVMUsers = scenario.DefaultJVMWarmupUsers
			m.Load.VariantWarmupUntil.JVMRateTimes = s.Load.JVMWarmupRateTimes()
		}
	}
	if s.Workload() != scenario.WorkloadLoad {
		m.Load = record.LoadSettings{Model: "none", SampleS: s.Sample.D().Seconds()}
	} else if s.Load.Closed() {
		m.Load.Model, m.Load.Users = "closed", s.Load.Users
		m.Load.ThinkS, m.Load.RampS = s.Load.Think.D().Seconds(), s.Load.Ramp.D().Seconds()
		m.Load.ThinkDistribution = cmp.Or(s.Load.ThinkDistribution, "constant")
	} else {
		for _, st := range s.Load.Steps() {
			m.Load.Rates = append(m.Load.Rates, st.Rate)
		}
		m.Load.QuantumS = s.Load.QuantumOrDefault().Seconds()
		m.Load.SliceS = s.Load.Slice.D().Seconds()
		m.Load.Arrival = s.Load.ArrivalOrDefault()
	}
	if len(s.Matrix.CPUs) > 0 {
		m.Matrix = &record.Matrix{CPUs: s.Matrix.CPUs}
	}
	for _, v := range s.Variants {
		m.Variants = append(m.Variants, v.Name)
	}
	return m
}

// commandLine is toll's command line as a person would type it again: a
// binary that `go run` built in a temporary directory is named "go run
// ./cmd/toll" (the path is gone once the run ends), any other is kept.
func commandLine(args []string) []string {
	if len(args) == 0 {
		return args
	}
	out := slices.Clone(args)
	dir := filepath.Dir(args[0])
	if strings.Contains(dir, string(filepath.Separator)+"go-build") && filepath.Base(dir) == "exe" {
		out[0] = "go run ./cmd/toll"
	}
	return out
}

// workDir is the directory toll runs in, or "" where it cannot be read.
func workDir() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	return d
}

// ChosenSchedule is the manifest's record of what toll chose of s's
// schedule (scenario.Schedule), or why it chose none, nil when the
// scenario named it all.
func ChosenSchedule(s *scenario.Scenario) *record.ScheduleChoice {
	c := s.Schedule
	shared := s.StepsShareStarts()
	if !c.ModeAuto && !c.RestartAuto && !c.WarmupAuto && !shared && c.Unchosen == "" {
		return nil
	}
	return &record.ScheduleChoice{Mode: c.ModeAuto, ModeWhy: c.ModeWhy, Restart: c.RestartAuto, RestartWhy: c.RestartWhy, Warmup: c.WarmupAuto,
		StepsShareStarts: shared, Unchosen: c.Unchosen}
}

// holdable returns s with a duet toll chose undone where this run cannot
// hold one (scenario.KeepOneAtATime): in a --find-max search, or with one
// variant (an A/A run adds its twin before this). A backend that cannot
// hold one undoes it with the rest of what it runs otherwise (its Adapt).
func holdable(s *scenario.Scenario, opt Options) *scenario.Scenario {
	why := ""
	switch {
	case !s.ChoseConcurrent():
		return s
	case opt.FindMax:
		why = scenario.ScheduleFindMax
	case len(s.Variants) < 2:
		why = scenario.ScheduleOneVariant
	default:
		return s
	}
	c := *s
	c.KeepOneAtATime(why)
	return &c
}

// execute carries out the plan's actions in order.
func (r *runner) execute(ctx context.Context, p *plan.Plan, m *record.Manifest) error {
	actions := p.Actions
	var pr *precisionRun
	if r.s.Precision.On {
		if m.Precision == nil {
			m.Precision = precisionRecord(r.s)
		}
		pr = newPrecisionRun(r.s, newAnalysisRule(r.s), time.Duration(m.Precision.SpentS*float64(time.Second)), actions)
		r.prec = pr
	}
	for i := 0; ; i++ {
		if i == len(actions) {
			// Every step has run: a step that stopped short of its
			// targets gets what the others left of the budget.
			more := r.takeUp(pr, m)
			if len(more) == 0 {
				break
			}
			actions = append(actions, more...)
		}
		a := actions[i]
		if ctx.Err() != nil {
			return fmt.Errorf("%w after %d of %d trials", ErrInterrupted, r.done, r.total)
		}
		began := time.Now()
		if t := trialOf(a); pr != nil && t != nil && t.Step != pr.step {
			r.mu.Lock() // enterStep sets pr.ahead, which events read
			pr.enterStep(t.Step)
			r.mu.Unlock()
		}
		var err error
		switch a.Kind {
		case plan.Start:
			err = r.backend.Start(ctx, a.Variant, a.CPULimit)
		case plan.Run:
			if err = r.runTrial(ctx, a.Trial); err == nil {
				err = r.sinksAlive(a.Trial.Variant)
			}
		case plan.RunAtOnce:
			if err = r.trialsAtOnce(ctx, a.Sides); err == nil {
				var vs []string
				for _, pt := range a.Sides {
					vs = append(vs, pt.Variant)
				}
				err = r.sinksAlive(vs...)
			}
		case plan.Stop:
			err = r.backend.Stop(ctx, a.Variant)
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%w after %d of %d trials: %v", ErrInterrupted, r.done, r.total, err)
			}
			return err
		}
		if pr == nil {
			continue
		}
		if a.Kind == plan.Start || a.Kind == plan.Stop {
			took := time.Since(began)
			pr.startTime += took
			if a.Kind == plan.Start && a.Variant == r.s.Variants[0].Name {
				pr.startCount++
			}
			if a.Kind == plan.Stop {
				pr.stopTime += took
				if a.Variant == r.s.Variants[0].Name {
					pr.stopCount++
				}
			}
		}
		if t, ok := roundEnds(actions, i, pr.shared); ok {
			rest, lighter, err := r.lighten(m, t, actions[i+1:])
			if err != nil {
				return err
			}
			if lighter {
				actions = append(actions[:i+1:i+1], rest...)
				continue
			}
			pr.thisStart++
			rest, err = r.afterRound(pr, m, t, actions[i+1:])
			if err != nil {
				return err
			}
			actions = append(actions[:i+1:i+1], rest...)
		}
	}
	return nil
}

// takeUp returns the actions that take up again a load step of a run in
// precision mode that stopped short of its targets (precisionRun.takeUp),
// counted among the run's trials; nil for none.
func (r *runner) takeUp(pr *precisionRun, m *record.Manifest) []plan.Action {
	if pr == nil {
		return nil
	}
	more := pr.takeUp(r.s, m)
	r.total += countTrials(more)
	return more
}

// closeAll closes the backend: it stops every running service and
// removes what the backend created for the run, within a bound of its own.
func (r *runner) closeAll() {
	if err := r.backend.Close(context.Background()); err != nil {
		fmt.Fprintln(r.opt.Progress, "toll: "+err.Error())
	}
}

// sinksAlive returns the backend's error when the telemetry sink of any of
// variants has exited (backend.SinkWatcher); nil for a backend that does
// not watch its sinks.
func (r *runner) sinksAlive(variants ...string) error {
	if r.can.watcher != nil {
		return r.can.watcher.SinksAlive(variants...)
	}
	return nil
}

// note adds n to the run's notes, once.
func (r *runner) note(n string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.notes, n) {
		r.notes = append(r.notes, n)
	}
}

// runTrial carries out one planned trial with the scenario's workload
// through the backend: steady load at the started services, a cold start
// of them, or one run of the job. It is the one place where the workloads
// part; the plan, the services around a trial, the records and the
// analysis are shared.
func (r *runner) runTrial(ctx context.Context, pt *plan.Trial) error {
	var tr *record.Trial
	var err error
	switch w := r.s.Workload(); w {
	case scenario.WorkloadStartup, scenario.WorkloadJob:
		switch {
		case w == scenario.WorkloadStartup && r.can.startups != nil:
			tr, err = r.can.startups.StartupTrial(ctx, pt)
		case w == scenario.WorkloadJob && r.can.jobs != nil:
			tr, err = r.can.jobs.JobTrial(ctx, pt)
		default:
			return fmt.Errorf("%s: this backend does not run %s experiments", r.s.Path, w)
		}
		if tr == nil {
			return err
		}
		return r.keepOther(tr)
	default:
		tr, res, err := r.backend.Trial(ctx, pt)
		if tr == nil {
			return err
		}
		return r.keep(tr, res)
	}
}

// trialsAtOnce carries out trials run at once through the backend.
func (r *runner) trialsAtOnce(ctx context.Context, sides []*plan.Trial) error {
	if r.can.atOnce == nil {
		return fmt.Errorf("%s: this backend does not run trials at once (mode: %s)", r.s.Path, r.s.Mode)
	}
	return r.can.atOnce.TrialsAtOnce(ctx, sides, r.keep)
}
