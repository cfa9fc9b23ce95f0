package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/launch"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/probe"
	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/supervise"
	"github.com/tollperf/toll/torecord"
	"github.com/tollperf/toll/variant"
)

// SinksAlive returns an error when the telemetry sink of any of variants
// has exited (backend.SinkWatcher): its agents' exports would go nowhere
// and read as none, so the run stops, keeping the trials it finished,
// instead of measuring on. The orchestrator checks it after every trial,
// whichever way the trial ran (alone, in a duet, or with every variant
// together).
func (b *Backend) SinksAlive(variants ...string) error {
	var errs []error
	for _, v := range variants {
		if sp := b.sinks[v]; sp != nil {
			errs = append(errs, sp.exited())
		}
	}
	return errors.Join(errs...)
}

// Prepare runs every variant's prepare command once, before the first
// start (hyperfine's --prepare; backend.Preparer). A failure stops the
// run.
func (b *Backend) Prepare(ctx context.Context) error {
	for _, v := range b.s.Variants {
		rv := b.variants[v.Name]
		if rv.Prepare == nil {
			continue
		}
		if err := b.hook(ctx, rv.Name, "prepare", rv.Prepare); err != nil {
			return err
		}
	}
	return nil
}

// hook runs variant name's prepare or before_each command c to its end, its
// output in the variant's hook log.
func (b *Backend) hook(ctx context.Context, name, what string, c *variant.Command) error {
	logName := fmt.Sprintf("%s.%s.log", name, what)
	logPath := b.dir.LogPath(logName)
	f, err := b.dir.OpenLog(logName, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("variant %s: %s: %w", name, what, err)
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = runid.Label(c.Env, b.id), c.Dir, f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("variant %s: %s %s: %w (its output is in %s)", name, what, strings.Join(c.Argv, " "), err, logPath)
	}
	return nil
}

// beforeEach runs the variant's before_each command, if it has one.
func (b *Backend) beforeEach(ctx context.Context, v *variant.Variant) error {
	if v.BeforeEach == nil {
		return nil
	}
	return b.hook(ctx, v.Name, "before_each", v.BeforeEach)
}

// jobTrial runs the variant's job once, in a cgroup of its own on the
// services' CPUs, and returns the trial, unwritten (backend.Jobs). A job
// that fails (exit status, signal, timeout) is recorded as failed, and
// one that an interrupt of toll cut short as interrupted.
func (b *Backend) jobTrial(ctx context.Context, pt *plan.Trial) (*record.Trial, error) {
	v := b.variants[pt.Variant]
	job := b.s.Job
	tr := &record.Trial{Index: pt.Index, Round: pt.Round, Launch: pt.Launch, Step: pt.Step, Variant: pt.Variant, Order: pt.Order, LoadCPUs: b.loadCPUs,
		Exports: v.Exports}
	if err := b.beforeEach(ctx, v); err != nil {
		return nil, err
	}
	// Spans are counted per job when any variant exports, so that the
	// baseline's row reads 0 beside the agent's.
	var sk counter
	if slices.ContainsFunc(b.s.Variants, func(v scenario.Variant) bool { return v.Exports }) {
		sk = b.sinkOf(pt.Variant)
	}
	logName := fmt.Sprintf("%s.job.%d.log", pt.Variant, pt.Index)
	jr := &record.JobRun{Argv: v.Job.Argv, Log: "logs/" + logName, Work: job.Work, Per: job.Per, Unit: job.Unit}
	tr.Job = jr
	argv := []string{b.cfg.Self, "_exec"}
	var g *cgroup.Group
	if b.tree != nil {
		var err error
		g, err = b.tree.NewGroup(fmt.Sprintf("%s.job%d", pt.Variant, pt.Index), cgroup.Limits{CPUs: b.svcCPUs})
		if err != nil {
			return nil, fmt.Errorf("variant %s: cgroup for its job: %w", pt.Variant, err)
		}
		defer func() { g.Kill(); g.Delete() }()
		argv = append(argv, "--cgroup-procs", strings.Join(g.ProcsFiles(), ","))
	}
	if b.svcCPUs != "" {
		argv = append(argv, "--cpus", b.svcCPUs)
	}
	argv = append(append(argv, "--"), v.Job.Argv...)
	b.beginProgress()
	svc, err := launch.Start(ctx, launch.Spec{Name: pt.Variant + "/job", Argv: argv, Env: runid.Label(v.Job.Env, b.id), Dir: v.Job.Dir,
		LogPath: b.dir.LogPath(logName), OpenLog: b.dir.LogOpener(logName), DeathSignal: supervise.DeathSignal})
	if err != nil {
		return nil, fmt.Errorf("variant %s: job: %w", pt.Variant, err)
	}
	tr.Start = svc.Started
	if sk != nil {
		tr.Telemetry = append(tr.Telemetry, torecord.Telemetry(0, sk.Counts()))
	}
	timeout := time.NewTimer(job.Timeout.D())
	defer timeout.Stop()
	select {
	case <-svc.Done():
	case <-timeout.C:
		jr.Failed, jr.Error = true, fmt.Sprintf("timed out after %s (job.timeout) and was killed", job.Timeout)
		svc.StopContext(b.kill, 0)
	case <-ctx.Done():
		tr.Interrupted, tr.Error = true, "interrupted"
		svc.StopContext(b.kill, b.cfg.StopGrace)
	}
	exited, state := svc.Exit()
	tr.MeasureStart, tr.MeasureEnd = svc.Started, exited
	jr.WallS = exited.Sub(svc.Started).Seconds()
	if state != nil {
		jr.ExitCode = state.ExitCode()
		if ru, ok := state.SysUsage().(*syscall.Rusage); ok {
			jr.MaxRSSBytes = uint64(ru.Maxrss) * 1024
		}
		jr.UserS, jr.SystemS = state.UserTime().Seconds(), state.SystemTime().Seconds()
		if !jr.Failed && !tr.Interrupted && !state.Success() {
			jr.Failed, jr.Error = true, "exited with "+state.String()
		}
	}
	if g != nil {
		if st, err := g.Stat(); err == nil {
			jr.Cgroup = true
			jr.UserS, jr.SystemS, jr.PeakMemoryBytes = st.User.Seconds(), st.System.Seconds(), st.MemoryPeak
		}
	}
	if jr.Failed {
		if tail := svc.LogTail(5); len(tail) > 0 {
			jr.Error += ": " + strings.Join(tail, " ↵ ")
		}
	}
	if sk != nil {
		// An agent's exporter flushes as its JVM shuts down, before the
		// job's last process exits; a request still being read then is
		// given a moment.
		time.Sleep(100 * time.Millisecond)
		tr.Telemetry = append(tr.Telemetry, torecord.Telemetry(time.Since(svc.Started).Seconds(), sk.Counts()))
	}
	jr.LogMetrics = readLogMetrics(b.dir, logName, 0, job.LogMetrics)
	return tr, nil
}

// startupTrial starts the variant's services from cold under the step's
// CPU limit, measures each start, stops them, and returns the trial,
// unwritten (backend.Startups). A service that does not become ready
// fails the trial, not the run.
func (b *Backend) startupTrial(ctx context.Context, pt *plan.Trial) (*record.Trial, error) {
	v := b.variants[pt.Variant]
	if err := b.beforeEach(ctx, v); err != nil {
		return nil, err
	}
	tr := &record.Trial{Index: pt.Index, Round: pt.Round, Launch: pt.Launch, Step: pt.Step, Variant: pt.Variant, Order: pt.Order, LoadCPUs: b.loadCPUs,
		Startup: &record.StartupRun{CPULimit: pt.CPULimit}}
	b.beginProgress()
	// Each readiness address is dialled from the launch on, to time when
	// its port first accepts a connection.
	pctx, stopPorts := context.WithCancel(ctx)
	opened := make([]time.Time, len(v.Services))
	var wg sync.WaitGroup
	for i, svc := range v.Services {
		addr := readinessAddr(svc.Ready)
		if addr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			opened[i] = firstConnect(pctx, addr)
		}()
	}
	tr.Start = time.Now()
	err := b.startLimited(ctx, pt.Variant, pt.CPULimit)
	readyAt := time.Now()
	st := b.runningOf(pt.Variant)
	var samples []serviceAtReady
	if err == nil {
		samples = b.readAtReady(st)
	}
	stopPorts()
	wg.Wait()
	tr.MeasureStart, tr.MeasureEnd = tr.Start, readyAt
	if err != nil {
		if ctx.Err() != nil {
			tr.Interrupted, tr.Error = true, "interrupted"
		} else {
			tr.Startup.Failed, tr.Startup.Error = true, err.Error()
		}
	} else {
		for i, lsvc := range st.group.Services() {
			run := st.runs[i]
			ss := record.ServiceStart{Name: run.Name, Measured: run.Measured, ReadyS: lsvc.StartupTime().Seconds(),
				CPUS: samples[i].cpu, RSSBytes: samples[i].rss, JVM: samples[i].jvm}
			if !opened[i].IsZero() {
				ss.PortOpenS = max(0, opened[i].Sub(lsvc.Started).Seconds())
			}
			if j := ss.JVM; j != nil {
				// The JVM's clock is in milliseconds since the epoch.
				launched := float64(lsvc.Started.UnixMilli()) / 1000
				if j.CreatedS > 0 {
					j.CreatedS -= launched
				}
				j.InitDoneS -= launched
			}
			ss.LogMetrics = readLogMetrics(b.dir, strings.TrimPrefix(run.Log, "logs/"), 0, b.s.Startup.LogMetrics)
			tr.Services = append(tr.Services, run)
			tr.Startup.Services = append(tr.Startup.Services, ss)
		}
		if len(b.s.Startup.LogMetrics) > 0 {
			b.awaitLogMetrics(tr)
		}
		if stopErr := b.stop(pt.Variant); stopErr != nil && ctx.Err() == nil {
			b.note(fmt.Sprintf("start %d (%s): %v", pt.Index, pt.Variant, stopErr))
		}
	}
	return tr, nil
}

// awaitLogMetrics gives the services up to two seconds after readiness to
// print the figures asked of them (Spring Boot logs "Started … in" just
// after its port opens), reading the logs again until each has them.
func (b *Backend) awaitLogMetrics(tr *record.Trial) {
	want := len(b.s.Startup.LogMetrics)
	deadline := time.Now().Add(2 * time.Second)
	for {
		missing := false
		for i := range tr.Startup.Services {
			ss := &tr.Startup.Services[i]
			if !ss.Measured || len(ss.LogMetrics) == want {
				continue
			}
			ss.LogMetrics = readLogMetrics(b.dir, strings.TrimPrefix(tr.Services[i].Log, "logs/"), 0, b.s.Startup.LogMetrics)
			missing = missing || len(ss.LogMetrics) < want
		}
		if !missing || time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serviceAtReady is what a service had spent when its variant was ready.
type serviceAtReady struct {
	cpu float64
	rss uint64
	jvm *record.JVMStart
}

// readAtReady reads each service's CPU-seconds (its cgroup's, else its
// process tree's), resident memory and JVM counters now, as its variant
// has become ready. Its JVM timestamps are left as Unix seconds.
func (b *Backend) readAtReady(st *started) []serviceAtReady {
	out := make([]serviceAtReady, len(st.runs))
	for i, svc := range st.group.Services() {
		tree, err := probe.NewDescendants(svc.Pid())
		if err == nil {
			if s, err := tree.Sample(); err == nil {
				out[i].cpu, out[i].rss = s.CPU.Seconds(), s.RSS
			}
		}
		if g := st.cgs[st.runs[i].Name]; g != nil {
			if s, err := g.Stat(); err == nil {
				out[i].cpu = s.CPU.Seconds()
			}
		}
		if tree == nil {
			continue
		}
		for _, pid := range tree.Pids() {
			path, err := jvm.Path(pid)
			if err != nil {
				continue
			}
			jr, err := jvm.Open(path)
			if err != nil {
				continue
			}
			c, cerr := jr.Counters()
			created, _ := jr.Long("sun.rt.createVmEndTime")
			jr.Close()
			if cerr != nil || c.VMInitDone.IsZero() {
				continue
			}
			out[i].jvm = &record.JVMStart{CreatedS: float64(created) / 1000, InitDoneS: float64(c.VMInitDone.UnixMilli()) / 1000,
				Classes: c.ClassesLoaded}
			break
		}
	}
	return out
}

// readinessAddr is the host:port a readiness check connects to, or "".
func readinessAddr(rd scenario.Ready) string {
	if rd.TCP != "" {
		return rd.TCP
	}
	u, err := url.Parse(rd.HTTP)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		return net.JoinHostPort(u.Hostname(), port)
	}
	return u.Host
}

// firstConnect dials addr every 10 ms until a connection succeeds, and
// returns when; the zero time if ctx ends first.
func firstConnect(ctx context.Context, addr string) time.Time {
	d := net.Dialer{Timeout: 100 * time.Millisecond}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			at := time.Now()
			c.Close()
			return at
		}
		select {
		case <-ctx.Done():
			return time.Time{}
		case <-tick.C:
		}
	}
}

// readLogMetrics reads the figures ms ask for from the log name in dir, from
// byte offset from: for each, the first capture group of its regex on the
// first line that matches, as a number.
func readLogMetrics(dir *record.Dir, name string, from int64, ms []scenario.LogMetric) map[string]float64 {
	if len(ms) == 0 {
		return nil
	}
	f, err := dir.OpenLog(name, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		return nil
	}
	return torecord.LogMetrics(f, ms)
}
