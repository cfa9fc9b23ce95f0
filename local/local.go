// Package local is the backend that runs a scenario's services on this
// machine: processes and containers (package place) in toll's cgroups,
// pinned to their CPUs, started through toll's _exec supervisor, with one
// telemetry sink per variant (toll _sink) beside them. It starts and stops
// a variant's services, measures trials of steady load (alone, or several
// variants at once on one timeline) with their variant warm-ups, samplers
// and the load generator in toll's own process, and runs start-up and job
// experiments.
//
// It implements every interface of package backend, and is driven by the
// orchestrator (package run) through them, which it never imports: what it
// tells the orchestrator (notes, progress, live figures, the end of a
// telemetry cycle) goes through the backend.Events it is given at Setup.
package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/leftover"
	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/place"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/probe/machine"
	"github.com/tollperf/toll/probe/perfcount"
	"github.com/tollperf/toll/probe/profile"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/variant"
)

// Options are how toll's command line asks the local backend to run a
// scenario's services; what it learns of the run itself comes at Setup
// (backend.Run).
type Options struct {
	// Self is the toll binary: the _exec supervisor of every service and
	// job, and the _sink of every variant (default: this process's
	// executable).
	Self string
	// NoCgroup reads costs from /proc even where cgroups are usable.
	NoCgroup bool
	// StopGrace is how long services get between SIGTERM and SIGKILL
	// (default 5s).
	StopGrace time.Duration
	// StopNow, once closed, cuts the grace period short: services being
	// stopped, and those stopped later, are killed at once (SIGKILL of
	// their process groups and cgroups). toll closes it on a second
	// interrupt.
	StopNow <-chan struct{}
	// Profile samples the on-CPU stacks of every measured service during
	// each measured window, as a service's profile: true does for it.
	Profile bool
	// AsyncProfiler is the path of async-profiler's libasyncProfiler.so;
	// PySpy the path of py-spy (empty: beside the service's Python, else
	// from PATH).
	AsyncProfiler string
	PySpy         string
}

// Backend runs services on this machine (see the package comment). New
// makes one; Setup prepares the machine before the first start, and Close
// undoes everything at the run's end.
type Backend struct {
	cfg Options
	// What Setup learns of the run (s is nil before it).
	s      *scenario.Scenario
	events backend.Events  // what the backend tells the orchestrator
	seed   int64           // the run's, which Poisson arrivals are drawn from
	id     runid.ID        // labels the processes and names the cgroup tree of this run
	kill   context.Context // done once services must be stopped without grace
	noKill context.CancelFunc
	dir    *record.Dir
	mu     sync.Mutex // guards running, spares, starts and ahead (a warm-up beside the rounds reads and changes them), and holdersOff and holdersSlow

	sinks    map[string]*sinkProcess // by variant
	tree     *cgroup.Tree
	svcCPUs  string
	loadCPUs string
	machine  *machine.Sampler // nil where /proc/stat can't be read
	hwCPUs   []int            // CPUs to count hardware events on; nil when unavailable
	// profilers sample the profiled services' stacks: a runtime's own
	// (profile.Preparer) for the services it takes, else perf, the last;
	// nil when no service is profiled.
	profilers []profile.Profiler
	// scratch is the run's private directory (leftover.ScratchPattern)
	// for what profilers and profiled processes write there and toll
	// reads back; empty when nothing is profiled. Close removes it.
	scratch  string
	duetCPUs [2]string // baseline's, others' (mode: duet)
	// warmupCPUs are the services' CPUs during variant warm-ups
	// (pinning.warmup: all); "" keeps them on their own.
	warmupCPUs string
	// idleGroups is set when services warming at idle priority do so in
	// idle cgroups that yield to the load generator too (joinTree): then
	// they yield to every service of the rounds and to toll alike.
	idleGroups bool
	// warmedBeside is what the latest spares warmed beside the rounds
	// took (WarmedBeside); guarded by mu.
	warmedBeside time.Duration
	// turnPrior is what the last warm-up with the CPUs to itself spent
	// in the phases a start warmed beside the rounds owes at its turn
	// (TurnWarmup); guarded by mu.
	turnPrior time.Duration
	// warmSpans are the requests that the spans of the steady rule held
	// in the last warm-up with the CPUs to itself, by phase and variant
	// (keepSpans); guarded by mu.
	warmSpans []map[string]uint64
	// rateCalls are the requests that each variant's services were sent
	// in the rate phase of the last warm-up with the CPUs to itself
	// (keepRateCalls); guarded by mu.
	rateCalls map[string]uint64
	// holdersOff is set once reading the machine's tasks took longer than
	// holderBudget holderStrikes times in a row: no trial names what ran
	// on the load CPUs after it. holdersSlow counts those readings.
	holdersOff  bool
	holdersSlow int
	variants    map[string]*variant.Variant
	running     map[string]*started // guarded by mu
	// spares are each variant's starts warmed ahead of their turn, oldest
	// first, and retired the sinks of starts a spare replaced, which
	// Close stops (spares.go). Guarded by mu.
	spares  map[string][]*started
	retired []*sinkProcess
	// warmShare is the share of the machine's CPUs that the services of
	// the last variant warm-up used, known once one has run (warmShared):
	// the next warms starts ahead of their turn only where it left room
	// (spareRoom). roomNoted is set once the manifest says a warm-up did
	// not, oneNoted once it says starts beside the rounds warm one at a
	// time (aheadAtOnce).
	// ahead is the warm-up of starts ahead of their turn running beside
	// the rounds (ahead.go), nil when none runs. Guarded by mu.
	ahead *aheadWarm
	// round is the round of the last one-at-a-time trial begun, once
	// roundSeen (enterRound), and warmBegan the last round with which a
	// warm-up beside those rounds began its load (the zero roundKey, no
	// round, for none: plan numbers rounds from 1). Guarded by mu.
	round      roundKey
	roundSeen  bool
	warmBegan  roundKey
	warmShare  float64
	warmShared bool
	roomNoted  bool
	oneNoted   bool
	// containers runs the services that have an image.
	containers place.Containers
	starts     map[string]int // starts per variant, to name log files
}

var (
	_ backend.Backend     = (*Backend)(nil)
	_ backend.AtOnce      = (*Backend)(nil)
	_ backend.Startups    = (*Backend)(nil)
	_ backend.Jobs        = (*Backend)(nil)
	_ backend.Preparer    = (*Backend)(nil)
	_ backend.SinkWatcher = (*Backend)(nil)
)

// New returns the local backend, run as opt asks; nothing starts before
// Setup.
func New(opt Options) *Backend {
	if opt.StopGrace == 0 {
		opt.StopGrace = 5 * time.Second
	}
	return &Backend{cfg: opt,
		running: map[string]*started{}, sinks: map[string]*sinkProcess{}, starts: map[string]int{}, variants: map[string]*variant.Variant{},
		spares: map[string][]*started{}}
}

// Adapt returns s as it is: the local backend runs every scenario as
// written (backend.Backend).
func (b *Backend) Adapt(s *scenario.Scenario) (*scenario.Scenario, string) { return s, "" }

// RecordsFailedSetup is false: what the local backend sets up, its
// cleaner finds by the run's label, and a run that fails before its first
// start leaves its manifest unwritten (backend.Backend).
func (b *Backend) RecordsFailedSetup() bool { return false }

// Start starts a variant's services in order and returns once each is
// ready (backend.Backend).
func (b *Backend) Start(ctx context.Context, variant string, cpuLimit float64) error {
	return b.startLimited(ctx, variant, cpuLimit)
}

// Trial runs one trial of steady load against a started variant
// (backend.Backend).
func (b *Backend) Trial(ctx context.Context, t *plan.Trial) (*record.Trial, *load.Result, error) {
	return b.measure(ctx, t, newOrigin(), turn{}, nil)
}

// TrialsAtOnce runs the trials of several started variants on one timeline
// (backend.AtOnce).
func (b *Backend) TrialsAtOnce(ctx context.Context, sides []*plan.Trial, keep backend.Keep) error {
	return b.duet(ctx, sides, keep)
}

// StartupTrial runs one cold start of a variant (backend.Startups).
func (b *Backend) StartupTrial(ctx context.Context, t *plan.Trial) (*record.Trial, error) {
	return b.startupTrial(ctx, t)
}

// JobTrial runs a variant's job once (backend.Jobs).
func (b *Backend) JobTrial(ctx context.Context, t *plan.Trial) (*record.Trial, error) {
	return b.jobTrial(ctx, t)
}

// Stop stops a variant's services (backend.Backend).
func (b *Backend) Stop(_ context.Context, variant string) error { return b.stop(variant) }

// Close stops every variant's services still running and the telemetry
// sinks, removes toll's cgroups, and kills what still carries the run's
// label. It is called once, at the end of every run, also a failed one;
// before Setup there is nothing to undo.
func (b *Backend) Close(ctx context.Context) error {
	if b.s == nil {
		return nil
	}
	defer b.noKill()
	b.stopAhead()
	// Every variant's services are stopped at once: services that ignore
	// SIGTERM cost the grace period once, not once per variant.
	var wg sync.WaitGroup
	running, _ := b.runningNow()
	for _, name := range slices.Collect(maps.Keys(running)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.stop(name)
		}()
	}
	for _, q := range b.spares {
		for _, st := range q {
			wg.Go(func() { b.stopSpare(st) })
		}
	}
	wg.Wait()
	// So are the sinks: each may take its 2 s to shut down.
	for _, sk := range append(slices.Collect(maps.Values(b.sinks)), b.retired...) {
		wg.Go(func() { closeSink(sk) })
	}
	wg.Wait()
	if b.tree != nil {
		b.tree.Close()
	}
	// A process that left both its service's process group and its
	// cgroup (or ran without one) still carries the run's label.
	stray, err := leftover.KillRun(ctx, b.id)
	if len(stray) > 0 {
		b.say("toll: killed what outlived the services: " + leftover.Describe(stray))
	}
	if b.scratch != "" {
		err = errors.Join(err, os.RemoveAll(b.scratch))
	}
	return err
}

// say prints line for the user (Events.Say).
func (b *Backend) say(line string) {
	if b.events != nil {
		b.events.Say(line)
	}
}

// beginProgress tells the orchestrator that a trial's measurement begins
// (Events.Began).
func (b *Backend) beginProgress() {
	if b.events != nil {
		b.events.Began()
	}
}

// Setup prepares this machine for the run before its first start: it
// removes what killed runs left, creates toll's cgroups, pins toll, resolves
// every variant with ports of its own, prepares profiling and starts one
// telemetry sink per variant. It records the layout it chose (cgroups, CPUs)
// in the manifest. Close undoes what it did, also when it fails.
func (b *Backend) Setup(ctx context.Context, run backend.Run) error {
	b.s, b.events, b.seed, b.id, b.dir = run.Scenario, run.Events, run.Seed, run.ID, run.Dir
	b.kill, b.noKill = context.WithCancel(context.Background())
	if stopNow := b.cfg.StopNow; stopNow != nil {
		go func() {
			select {
			case <-stopNow:
				b.noKill()
			case <-b.kill.Done():
			}
		}()
	}
	if b.cfg.Self == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find toll's own binary: %w", err)
		}
		b.cfg.Self = self
	}
	m := run.Manifest
	// A resumed run's directory holds the logs of its earlier starts, which
	// later starts are numbered after.
	b.starts = startsSoFar(b.dir, m.Variants)
	s, opt := b.s, b.cfg
	if ms, err := machine.NewSampler(); err == nil {
		b.machine = ms
	} else {
		b.note("machine CPU and memory unavailable: " + err.Error())
	}
	b.cleanUp(ctx)
	if err := b.setupCgroups(m); err != nil {
		return err
	}
	if err := b.setupPinning(m); err != nil {
		return err
	}
	b.joinTree()
	b.setupHardwareCounters()
	pool := &portPool{}
	sinkAddrs := map[string]string{}
	for _, v := range s.Variants {
		// Each variant exports to a sink of its own, so telemetry a variant
		// flushes after its window (a batch exporter's timer) is never
		// counted for another variant running beside it.
		port, err := pool.take()
		if err != nil {
			pool.release()
			return fmt.Errorf("telemetry sink for %s: %w", v.Name, err)
		}
		sinkAddrs[v.Name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		rv, err := resolveVariant(s, v.Name, pool, "http://"+sinkAddrs[v.Name], opt.Self)
		if err != nil {
			pool.release()
			return fmt.Errorf("variant %s: %w", v.Name, err)
		}
		b.variants[v.Name] = rv
	}
	pool.release()
	if err := b.setupProfiling(ctx); err != nil {
		return err
	}
	for _, v := range s.Variants {
		sk, err := startSinkProcess(ctx, opt.Self, v.Name, sinkAddrs[v.Name], b.dir, v.Name+".sink.log", b.id)
		if err != nil {
			return err
		}
		b.sinks[v.Name] = sk
	}
	return nil
}

// cleanUp removes what earlier runs of toll that were killed left behind
// (their labelled processes, their cgroup trees), and says what it removed.
func (b *Backend) cleanUp(ctx context.Context) {
	removed, err := leftover.Clean(ctx, leftover.Cleaners())
	if len(removed) > 0 {
		n := "removed what earlier runs of toll that were killed left: " + leftover.Describe(removed)
		b.note(n)
		b.say("toll: " + n)
	}
	if err != nil {
		b.note("could not remove all that earlier runs left: " + err.Error())
	}
}

// setupCgroups creates toll's cgroup subtree, or notes why costs come from /proc.
func (b *Backend) setupCgroups(m *record.Manifest) error {
	m.Layout.Cgroup = "none"
	if b.cfg.NoCgroup {
		m.Layout.CgroupNote = "disabled by --no-cgroup"
		return nil
	}
	v, err := cgroup.Detect()
	if err != nil {
		m.Layout.CgroupNote = err.Error()
		return nil
	}
	tree, err := cgroup.NewTree(runid.TreeName(b.s.Name, b.id))
	if err != nil {
		m.Layout.CgroupNote = err.Error()
		return nil
	}
	b.tree = tree
	m.Layout.Cgroup = v.String()
	return nil
}

// joinTree moves toll's own process into the run's cgroup tree where
// services warm at idle priority on every CPU (starts beside the rounds,
// warm-ups widened): they do so in idle groups, which yield to their
// siblings only, and the load generator must be one of them. Elsewhere
// toll stays where it runs: in the tree, its load on its own CPUs takes
// a share of the tree's weight from the services' CPUs, and a Go SDK's
// CPU per request read higher and less steadily for it.
func (b *Backend) joinTree() {
	if b.tree == nil || b.warmupCPUs == "" {
		return
	}
	if !b.tree.CanIdle() {
		b.note("services warming at idle priority (starts beside the rounds, warm-ups on every CPU) take up to half of a CPU they share with the load generator: this kernel has no idle cgroups (cpu.idle, Linux 5.15)")
	} else if err := b.tree.Join(); err != nil {
		b.note("services warming at idle priority (starts beside the rounds, warm-ups on every CPU) take up to half of a CPU they share with the load generator: " + err.Error())
	} else {
		b.idleGroups = true
	}
}

// setupHardwareCounters decides whether instructions and cycles can be
// counted per service cgroup, and notes once why not.
func (b *Backend) setupHardwareCounters() {
	if err := perfcount.Available(); err != nil {
		b.note("instructions and cycles unavailable: " + err.Error())
		return
	}
	if b.tree == nil || !b.tree.PerfEvent() {
		b.note("instructions and cycles unavailable: they are counted per cgroup, and this run has none that perf_event_open can watch (on cgroup v1, mount the perf_event controller)")
		return
	}
	online, err := pin.Online()
	if err != nil {
		b.note("instructions and cycles unavailable: " + err.Error())
		return
	}
	b.hwCPUs = online
}

// setupPinning puts toll on its CPUs and decides the services' default CPUs.
func (b *Backend) setupPinning(m *record.Manifest) error {
	p := b.s.Pinning
	if p.Off {
		return nil
	}
	online, err := pin.Online()
	if err != nil {
		b.note("CPU pinning unavailable: " + err.Error())
		return nil
	}
	loadCPUs, svcCPUs := p.Load, p.Services
	if len(online) < 2 && (loadCPUs == "" || svcCPUs == "") {
		b.note("only one CPU: load generator and services share it")
		return nil
	}
	if loadCPUs == "" {
		loadCPUs = pin.CPUs{online[0]}.String()
	}
	if svcCPUs == "" {
		svcCPUs = online[1:].String()
	}
	if b.s.Concurrent() {
		svc, err := pin.Parse(svcCPUs)
		if err != nil {
			return fmt.Errorf("pinning.services: %w", err)
		}
		if b.s.Pinning.Duet == scenario.DuetShared {
			b.duetCPUs = [2]string{svc.String(), svc.String()}
			b.note(sharedNote(b.s, svc.String()))
		} else {
			half := len(svc) / 2
			b.duetCPUs = [2]string{svc[:half].String(), svc[half : 2*half].String()}
		}
		m.Layout.DuetCPUs = b.duetCPUs[:]
	}
	lc, err := pin.Parse(loadCPUs)
	if err != nil {
		return fmt.Errorf("pinning.load: %w", err)
	}
	if err := lc.Process(os.Getpid()); err != nil {
		return fmt.Errorf("pin toll to CPUs %s: %w", loadCPUs, err)
	}
	b.svcCPUs, b.loadCPUs = svcCPUs, loadCPUs
	m.Layout.LoadCPUs, m.Layout.ServiceCPUs = loadCPUs, svcCPUs
	if p.Warmup == scenario.WarmupAllCPUs {
		b.warmupCPUs = online.String()
		m.Layout.WarmupCPUs = b.warmupCPUs
	}
	return nil
}

// sharedNote says how the sides of s share the services' CPUs svc, for a
// shared duet or variants together ("" otherwise).
func sharedNote(s *scenario.Scenario, svc string) string {
	switch {
	case !s.Concurrent() || s.Pinning.Duet != scenario.DuetShared:
		return ""
	case s.Mode == scenario.ModeTogether:
		return fmt.Sprintf("%d variants together on shared CPUs %s: their CPU and memory costs compare; their latencies do not, since each side waits for the others' CPU", len(s.Variants), svc)
	case s.Load.Slice.D() > 0:
		return fmt.Sprintf("duet on shared CPUs %s, the two sides' loads taking turns of %s: latencies compare too; windows last twice their duration, and work beside the requests (GC, JIT, timers) is charged over all of it (docs/method.md, \"Taking turns\")", svc, s.Load.Slice.D())
	}
	return fmt.Sprintf("duet on shared CPUs %s: the two sides' CPU and memory costs compare; their latencies do not, since each side waits for the other's CPU", svc)
}

// Reschedule implements backend.AtOnce: the trials from now on load the
// sides of s's mode at once. Starts warming beside the rounds are stopped
// first (their warm-up followed the old mode's trials, and it reads the
// scenario); the next round's trials begin their warm-up again, and those
// warmed already wait for their turn.
func (b *Backend) Reschedule(s *scenario.Scenario) (replaced, note string) {
	b.stopAhead()
	// The shared CPUs as Setup wrote them into its note (duetCPUs).
	replaced = sharedNote(b.s, b.duetCPUs[0])
	b.s = s
	return replaced, sharedNote(s, b.duetCPUs[0])
}

// startsSoFar counts the starts of each variant that left a log in dir, so
// that a resumed run names its logs after them instead of over them.
func startsSoFar(dir *record.Dir, variants []string) map[string]int {
	starts := map[string]int{}
	entries, err := dir.ReadLogs()
	if err != nil {
		return starts
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(name, '.')
		n, err := strconv.Atoi(name[i+1:])
		if i < 0 || err != nil {
			continue
		}
		for _, v := range variants {
			if strings.HasPrefix(name, v+".") && n > starts[v] {
				starts[v] = n
			}
		}
	}
	return starts
}
