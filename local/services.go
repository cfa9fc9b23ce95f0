package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/launch"
	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/place"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/supervise"
	"github.com/tollperf/toll/torecord"
	"github.com/tollperf/toll/variant"
)

// started is a variant whose services are running.
type started struct {
	v     *variant.Variant
	group *launch.Group
	cgs   map[string]*cgroup.Group // by service name
	runs  []record.ServiceRun
	fresh bool // no trial has run since the services started
	// warmed is set once a loaded trial has run since the services
	// started: the first one carries the variant's warm-up.
	warmed bool
	// rewarm is set when warmed services are owed a warm-up again beside
	// a fresh duet partner: they take it at the trial's rate, the fresh
	// side at load.variant_warmup_rate.
	rewarm bool
	// settle says why a start warmed beside the rounds is owed a warm-up
	// as it takes its turn (promoteSpare, turnWarmup), on the warm-up
	// CPUs, that ends only once its compilers are not busy; turnNone when
	// it is owed none.
	settle turnWarm
	// warmup is the variant warm-up that has just ended, for the trial it
	// began (which records it and clears it).
	warmup *variantWarmup
	// exitReported is set once a trial has reported one of the services'
	// exit (it ended that trial).
	exitReported bool
	// profiling is the sampling a duet started for the side's trial
	// before the sides' origin, which the trial takes over.
	profiling *profiling
	// profileDirs are where the profilers loaded at the services' start
	// keep their data, by service name.
	profileDirs map[string]string
	// cpuLimit is the CPU quota the services started with (0: their
	// own).
	cpuLimit float64
	// spareOf names the variant of a start warmed ahead of its turn,
	// which waits idle beside the variant's current start (spares.go);
	// sink is its own telemetry sink, which becomes the variant's when
	// the start does. Both are empty for a start run at its turn.
	spareOf string
	sink    *sinkProcess
	// unwiden puts a spare warmed beside the rounds back on its own CPUs
	// at its own priority (widenForWarmup), at its turn; nil otherwise.
	unwiden func() error
	// idleOn are the CPUs such a spare runs on at idle priority until its
	// turn (warmAhead).
	idleOn string
	// skippedRate says such a spare skips its warm-up's rate phase
	// there (warmPhases), which it owes at its turn (turnWarmup).
	skippedRate bool
	// idleStart is set when the services started at idle priority
	// (launchStart's idleOn): their own priority is the default one.
	idleStart bool
}

// startLimited starts variant name's services in order and waits until
// each is ready, with every service's CPU quota set to cpuLimit cores (0
// keeps each service's own cpu_limit, or its variant's): a start-up step's
// limit, or a load test's matrix step's.
func (b *Backend) startLimited(ctx context.Context, name string, cpuLimit float64) error {
	// A spare warmed already takes its turn at once; otherwise the new
	// start is one of those warming beside the rounds.
	if !b.spareReady(name, cpuLimit) {
		if err := b.awaitAhead(ctx); err != nil {
			return fmt.Errorf("variant %s: %w", name, err)
		}
	}
	if b.promoteSpare(name, cpuLimit) {
		return nil
	}
	st, err := b.launchStart(ctx, name, b.nextStart(name), b.variants[name], cpuLimit, false, "")
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.running[name] = st
	b.mu.Unlock()
	return nil
}

// launchStart starts the services of v, variant name resolved, as its
// start number n (nextStart), in order and waits until each is ready, as
// startLimited does, and returns them started. A spare's cgroups carry
// its start's number: it runs beside the variant's current start. With
// idleOn set, the services start at idle priority on as many of those CPUs
// as their own (bootCPUs; a start warmed beside the rounds), and their own
// CPUs and priority are theirs again at their turn (started.unwiden).
func (b *Backend) launchStart(ctx context.Context, name string, n int, v *variant.Variant, cpuLimit float64, spare bool, idleOn string) (*started, error) {
	st := &started{v: v, cgs: map[string]*cgroup.Group{}, fresh: true, profileDirs: map[string]string{}, cpuLimit: cpuLimit, idleStart: idleOn != ""}
	var specs []launch.Spec
	for i, svc := range v.Services {
		svcArgv, svcEnv, profDir, err := b.prepareProfiling(v, i, n)
		if err != nil {
			b.dropCgroups(st)
			return nil, fmt.Errorf("variant %s: %w", name, err)
		}
		st.profileDirs[svc.Name] = profDir
		cpus := svc.CPUs
		if cpus == "" {
			cpus = b.svcCPUs
			if b.s.Concurrent() {
				cpus = b.duetCPUs[1]
				if name == b.s.Baseline {
					cpus = b.duetCPUs[0]
				}
			}
		}
		runOn := cpus
		if idleOn != "" {
			runOn = bootCPUs(cpus, idleOn)
		}
		limit := svc.CPULimit
		if cpuLimit > 0 {
			limit = cpuLimit
		}
		var cg *cgroup.Group
		if b.tree != nil {
			cgName := name + "." + svc.Name
			if spare {
				cgName += "." + strconv.Itoa(n)
			}
			g, err := b.tree.NewGroup(cgName, cgroup.Limits{CPUs: runOn, CPULimit: limit, MemoryLimit: int64(svc.MemoryLimit)})
			if err != nil {
				b.dropCgroups(st)
				return nil, fmt.Errorf("variant %s: cgroup for %s: %w", name, svc.Name, err)
			}
			st.cgs[svc.Name] = g
			cg = g
			if idleOn != "" {
				if err := g.SetIdle(true); err != nil && !errors.Is(err, fs.ErrNotExist) {
					b.dropCgroups(st)
					return nil, fmt.Errorf("variant %s: %s at idle priority: %w", name, svc.Name, err)
				}
			}
		} else if limit > 0 || svc.MemoryLimit > 0 {
			b.note(fmt.Sprintf("%s: cpu_limit and memory_limit need cgroups and were not applied", svc.Name))
			limit, svc.MemoryLimit = 0, 0 // what the trials record
		}
		var pl place.Place = place.Host{}
		if svc.Image != "" {
			pl = &b.containers
		}
		l, err := pl.Launch(ctx, place.Service{Name: name + "/" + svc.Name, Start: n, Run: b.id,
			Argv: svcArgv, Env: svc.Own, HostEnv: svcEnv, Dir: svc.Dir, Image: svc.Image, Engine: svc.Engine, Ports: svc.Publish,
			Cgroup: cg, CPUs: runOn, CPULimit: limit, MemoryLimit: int64(svc.MemoryLimit), Idle: idleOn != ""})
		if err != nil {
			b.dropCgroups(st)
			return nil, fmt.Errorf("variant %s: %w", name, err)
		}
		// Every service runs under the _exec supervisor, which kills what
		// the service started if toll dies, and every process of the run
		// carries its label.
		argv := append(append(append([]string{b.cfg.Self, "_exec"}, l.Supervisor...), "--"), l.Argv...)
		var readyLog *regexp.Regexp
		if svc.Ready.Log != "" {
			re, err := regexp.Compile(svc.Ready.Log)
			if err != nil {
				b.dropCgroups(st)
				return nil, fmt.Errorf("variant %s: %s: ready.log: %w", name, svc.Name, err)
			}
			readyLog = re
		}
		logName := fmt.Sprintf("%s.%s.%d.log", name, svc.Name, n)
		specs = append(specs, launch.Spec{Name: name + "/" + svc.Name, Argv: argv, Env: runid.Label(l.Env, b.id), Dir: l.Dir,
			LogPath: b.dir.LogPath(logName), OpenLog: b.dir.LogOpener(logName),
			Ready: launch.Readiness{HTTP: svc.Ready.HTTP, TCP: svc.Ready.TCP, Log: readyLog, Timeout: svc.Ready.Timeout.D(),
				Command: svc.Ready.Command, CommandDir: svc.ReadyDir, CommandEnv: runid.Label(os.Environ(), b.id)},
			StopSignal: svc.Signal(), DeathSignal: supervise.DeathSignal, Members: l.Members, Forwarded: l.Forwarded, Release: l.Release})
		var cgPath string
		if cg != nil {
			cgPath = cg.Path()
		}
		var ports []record.PublishedPort
		for _, p := range svc.Publish {
			ports = append(ports, record.PublishedPort{Host: p.Host, Container: p.Container})
		}
		st.runs = append(st.runs, record.ServiceRun{Name: svc.Name, Role: svc.Role, Measured: svc.Measure || svc.Role == "agent",
			Argv: svc.Argv, Log: "logs/" + logName, Cgroup: cgPath, CPUs: cpus, Image: svc.Image, Container: l.Container, Ports: ports,
			CPULimit: limit, MemoryLimitBytes: int64(svc.MemoryLimit)})
	}
	g, err := launch.StartGroup(ctx, b.kill, specs)
	if err != nil {
		b.dropCgroups(st)
		return nil, fmt.Errorf("variant %s: %w", name, err)
	}
	st.group = g
	for i, svc := range g.Services() {
		st.runs[i].Pid = svc.Pid()
		st.runs[i].StartupS = svc.StartupTime().Seconds()
	}
	return st, nil
}

// nextStart counts a start of variant name's services and returns its
// number, which names its logs and a spare's cgroups.
func (b *Backend) nextStart(name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.starts[name]++
	return b.starts[name]
}

// runningOf returns the started services run under name (a variant, or a
// spare's key while it warms), nil when none runs.
func (b *Backend) runningOf(name string) *started {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running[name]
}

// variantOf returns the variant that name runs: a spare's (its spareOf),
// or name itself.
func (b *Backend) variantOf(name string) string {
	if st := b.runningOf(name); st != nil && st.spareOf != "" {
		return st.spareOf
	}
	return name
}

// runningNow returns copies of what runs now (running) and of the spares
// waiting their turn, for a reading that ranges over them while a warm-up
// ahead of the rounds may start or shelve a spare.
func (b *Backend) runningNow() (map[string]*started, map[string][]*started) {
	b.mu.Lock()
	defer b.mu.Unlock()
	spares := map[string][]*started{}
	for name, q := range b.spares {
		spares[name] = slices.Clone(q)
	}
	return maps.Clone(b.running), spares
}

// stop stops variant name's services and removes their cgroups, and
// tells the orchestrator so (Events.Stopped) with their telemetry sink's
// counts, which end the telemetry cycle of the variant's last trial.
func (b *Backend) stop(name string) error {
	b.mu.Lock()
	st, ok := b.running[name]
	delete(b.running, name)
	b.mu.Unlock()
	if !ok {
		return nil
	}
	if st.spareOf != "" {
		return b.stopSpare(st) // a spare cut short in its warm-up
	}
	b.noteIdleExits(st)
	err := b.halt(st)
	var endErr error
	if sk := b.sinks[name]; sk != nil && b.events != nil {
		endErr = b.events.Stopped(name, func(context.Context) (record.Telemetry, time.Time, error) {
			return torecord.Telemetry(0, sk.Counts()), time.Now(), nil
		})
	}
	if err != nil {
		return fmt.Errorf("stop variant %s: %w", name, err)
	}
	return endErr
}

// halt stops st's services and removes their cgroups and what the
// profilers loaded at their start kept: of no use once they have
// stopped, since each trial's profile is written.
func (b *Backend) halt(st *started) error {
	err := st.group.StopContext(b.kill, b.cfg.StopGrace)
	b.dropCgroups(st)
	for _, d := range st.profileDirs {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	return err
}

// noteIdleExits notes the services of st that exited on their own while
// none of their variant's trials ran (after its last one, or while the run
// stopped for another reason), which no trial reported: a run's
// measurements stand without them, but the reader learns that, and why.
func (b *Backend) noteIdleExits(st *started) {
	if st.exitReported {
		return
	}
	for _, svc := range st.group.Services() {
		select {
		case <-svc.Done():
			if err := svc.ExitErr(); err != nil {
				b.note(strings.ReplaceAll(err.Error(), "\n\t", " ↵ ") + " (while no trial of its variant ran, before toll stopped it)")
			}
		default:
		}
	}
}

func (b *Backend) dropCgroups(st *started) {
	for _, g := range st.cgs {
		g.Kill()
		g.Delete()
	}
}

// note adds n to the run's notes (Events.Note).
func (b *Backend) note(n string) {
	if b.events != nil {
		b.events.Note(n)
	}
}

// bootCPUs returns the CPUs that a service whose own CPUs are own begins
// on, at idle priority, beside the rounds: as many as own, taken from
// from, those outside own first (its own are the rounds' services').
// A program sizes itself by the CPUs it sees when it begins: a JVM on one
// CPU picks the serial collector and fewer threads, on two the G1
// collector; a Go program sets GOMAXPROCS. A start begun on more CPUs than
// the start it replaces would be another program, with its own memory,
// threads, collections and latency. own is returned where a list does not
// parse or from holds fewer CPUs than own.
func bootCPUs(own, from string) string {
	mine, err1 := pin.Parse(own)
	all, err2 := pin.Parse(from)
	if err1 != nil || err2 != nil || len(all) < len(mine) {
		return own
	}
	var out pin.CPUs
	for _, outside := range []bool{true, false} {
		for _, c := range all {
			if len(out) < len(mine) && slices.Contains(mine, c) != outside {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out.String()
}
