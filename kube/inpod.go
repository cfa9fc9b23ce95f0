package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/launch"
	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/probe"
	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/probe/runtime"
	"github.com/tollperf/toll/probe/runtimes"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/sink"
	"github.com/tollperf/toll/torecord"
)

// The commands in this file run inside the cluster, in toll's image; each
// prints JSON lines that Runner reads back from the pod's log.

// ProbeLine is one line of `toll k8s probe`: one service's sample at Time.
type ProbeLine struct {
	Time    time.Time     `json:"time"`
	Service string        `json:"service"`
	Sample  record.Sample `json:"sample"`
}

// Probe samples, every interval until ctx is done, the processes of each
// service of run (TOLL_RUN=run and TOLL_SERVICE=NAME in their environment:
// in a pod that shares its process namespace, every container's), and
// writes a ProbeLine per service to w, with the counters of the JVM among
// a service's processes when there is one. CPU counts the processes alive
// at each sample and the children they reaped; a container's own cgroup is
// not visible from the probe's container.
//
// With starts (the pod of a start-up experiment's start), it also runs each
// service's readiness check every 25 ms from its own start and, once all
// have passed, writes a StartLine per service.
func Probe(ctx context.Context, w io.Writer, interval time.Duration, runLabel string, starts []StartCheck) error {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	samplers := map[string]*probe.Members{}
	rts := map[string]*runtimeReader{}
	defer func() {
		for _, j := range rts {
			j.close()
		}
	}()
	out := &lineWriter{enc: json.NewEncoder(w)}
	if len(starts) > 0 {
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { stop(); <-done }()
		go func() {
			defer close(done)
			watchStarts(wctx, out, fs, runLabel, starts)
		}()
	}
	// groups is one map, refilled at every sample, since each service's
	// sampler reads its processes from it.
	groups := map[string][]int{}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		found, err := runProcs(fs, runLabel)
		if err != nil {
			return fmt.Errorf("probe: %w", err)
		}
		clear(groups)
		maps.Copy(groups, found)
		now := time.Now()
		for svc := range groups {
			m, ok := samplers[svc]
			if !ok {
				if m, err = probe.NewMembers(func() ([]int, error) { return groups[svc], nil }); err != nil {
					return err
				}
				samplers[svc] = m
			}
			ps, err := m.Sample()
			if err != nil {
				continue
			}
			line := ProbeLine{Time: now, Service: svc, Sample: record.Sample{CPU: ps.CPU.Seconds(), User: ps.User.Seconds(), System: ps.System.Seconds(),
				RSS: ps.RSS, Threads: ps.Threads, FDs: ps.FDs, Procs: ps.Procs}}
			if rts[svc] == nil {
				rts[svc] = &runtimeReader{}
			}
			line.Sample.Runtimes = rts[svc].read(groups[svc])
			if err := out.encode(line); err != nil {
				return fmt.Errorf("probe: %w", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// runProcs returns the processes of run runLabel (TOLL_RUN=runLabel and
// TOLL_SERVICE=NAME in their environment) by service, without toll's own.
func runProcs(fs procfs.FS, runLabel string) (map[string][]int, error) {
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, err
	}
	groups := map[string][]int{}
	for _, p := range procs {
		if p.PID == os.Getpid() {
			continue
		}
		env, err := p.Environ()
		if err != nil {
			continue // gone, or not ours to read
		}
		var svc, rl string
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, EnvService+"="); ok {
				svc = v
			} else if v, ok := strings.CutPrefix(kv, runid.EnvVar+"="); ok {
				rl = v
			}
		}
		if svc != "" && rl == runLabel {
			groups[svc] = append(groups[svc], p.PID)
		}
	}
	return groups, nil
}

// lineWriter writes JSON lines from more than one goroutine.
type lineWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (l *lineWriter) encode(v any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.enc.Encode(v)
}

// StartCheck is one service's readiness check, as `toll k8s probe
// --startup` takes it (JSON): an HTTP URL that must answer 2xx or 3xx, or
// a TCP address that must accept a connection.
type StartCheck struct {
	Service string `json:"service"`
	HTTP    string `json:"http,omitempty"`
	TCP     string `json:"tcp,omitempty"`
}

// addr is the host:port the check connects to, "" when it has none.
func (c StartCheck) addr() string {
	if c.TCP != "" {
		return c.TCP
	}
	u, err := url.Parse(c.HTTP)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return u.Host
}

// StartLine is the line `toll k8s probe --startup` prints for each service
// once every service of the pod is ready. Its "start" key sets it apart
// from a ProbeLine.
type StartLine struct {
	// Time is when the last of the pod's services became ready, when
	// CPU, RSS and the JVM's counters were read.
	Time  time.Time    `json:"time"`
	Start ServiceStart `json:"start"`
}

// ServiceStart is one service's start as the probe saw it, in the node's
// wall-clock time.
type ServiceStart struct {
	Service string `json:"service"`
	// Launched is the start of the service's first process (its
	// container's), from /proc/PID/stat, to the kernel's clock tick
	// (10 ms); zero when the probe found no process of the service.
	Launched time.Time `json:"launched"`
	// PortOpen is when the readiness address first accepted a TCP
	// connection, Ready when the readiness check first passed.
	PortOpen time.Time `json:"port_open"`
	Ready    time.Time `json:"ready"`
	// CPU is the CPU-seconds its processes (and the children they
	// reaped) had spent at Time, RSS their resident memory then.
	CPU float64 `json:"cpu_s"`
	RSS uint64  `json:"rss_bytes"`
	// JVMCreated and JVMInitDone are the JVM's own start-up timestamps
	// (sun.rt.createVmEndTime, sun.rt.vmInitDoneTime), Classes the classes
	// it had loaded at Time, for a service that runs a JVM with
	// hsperfdata.
	JVMCreated  time.Time `json:"jvm_created,omitzero"`
	JVMInitDone time.Time `json:"jvm_init_done,omitzero"`
	Classes     int64     `json:"classes,omitempty"`
}

// watchStarts times the start of each service of checks: as often as a
// local start-up experiment checks readiness (launch.PollWait, a tenth of
// the time waited so far, so a quick start reads to a tenth of itself) it
// connects to each readiness address not yet open and runs each check
// not yet passed, and once every check has passed it reads each service's
// processes (their launch, CPU and RSS) and JVM and writes a StartLine per
// service. It returns then, or when ctx ends.
func watchStarts(ctx context.Context, out *lineWriter, fs procfs.FS, runLabel string, checks []StartCheck) {
	opened := make([]time.Time, len(checks))
	ready := make([]time.Time, len(checks))
	began := time.Now()
	wait := time.NewTimer(launch.PollWait(0)) // reset before each pause
	defer wait.Stop()
	for {
		left := 0
		for i, c := range checks {
			if !ready[i].IsZero() {
				continue
			}
			left++
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			if opened[i].IsZero() {
				if a := c.addr(); a != "" {
					if conn, err := (&net.Dialer{}).DialContext(cctx, "tcp", a); err == nil {
						opened[i] = time.Now()
						conn.Close()
					}
				}
			}
			var urls, addrs []string
			if c.HTTP != "" {
				urls = []string{c.HTTP}
			}
			if c.TCP != "" {
				addrs = []string{c.TCP}
			}
			if (c.HTTP != "" || c.TCP != "") && Ready(cctx, urls, addrs) == nil {
				ready[i] = time.Now()
				if opened[i].IsZero() {
					opened[i] = ready[i]
				}
				left--
			}
			cancel()
		}
		if left == 0 {
			break
		}
		wait.Reset(launch.PollWait(time.Since(began)))
		select {
		case <-ctx.Done():
			return
		case <-wait.C:
		}
	}
	groups, _ := runProcs(fs, runLabel)
	now := time.Now()
	for i, c := range checks {
		st := ServiceStart{Service: c.Service, PortOpen: opened[i], Ready: ready[i]}
		readStart(fs, groups[c.Service], &st)
		if out.encode(StartLine{Time: now, Start: st}) != nil {
			return
		}
	}
}

// readStart fills in st what the processes pids of a service show: when
// the first of them started, what they spent, and their JVM's start-up.
func readStart(fs procfs.FS, pids []int, st *ServiceStart) {
	if len(pids) == 0 {
		return
	}
	for _, pid := range pids {
		p, err := fs.Proc(pid)
		if err != nil {
			continue
		}
		ps, err := p.Stat()
		if err != nil {
			continue
		}
		if at := launchedAt(ps.Starttime); st.Launched.IsZero() || at.Before(st.Launched) {
			st.Launched = at
		}
	}
	if m, err := probe.NewMembers(func() ([]int, error) { return pids, nil }); err == nil {
		if s, err := m.Sample(); err == nil {
			st.CPU, st.RSS = s.CPU.Seconds(), s.RSS
		}
	}
	for _, pid := range pids {
		path, err := jvm.PathIn("/proc", pid) // in its own container too
		if err != nil {
			continue
		}
		r, err := jvm.Open(path)
		if err != nil {
			continue
		}
		c, cerr := r.Counters()
		created, _ := r.Long("sun.rt.createVmEndTime")
		r.Close()
		if cerr != nil || c.VMInitDone.IsZero() {
			continue
		}
		st.JVMInitDone, st.Classes = c.VMInitDone, c.ClassesLoaded
		if created > 0 {
			st.JVMCreated = time.UnixMilli(created)
		}
		return
	}
}

// userHZ is the unit of a process's start time in /proc/PID/stat.
const userHZ = 100

// launchedAt converts a process's start, in clock ticks since boot
// (/proc/PID/stat's starttime), to wall-clock time, through the boot-time
// clock: the boot time /proc/stat gives is in whole seconds.
func launchedAt(ticks uint64) time.Time {
	var ts unix.Timespec
	now := time.Now()
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return time.Time{}
	}
	sinceBoot := time.Duration(ts.Nano())
	started := time.Duration(ticks) * time.Second / userHZ
	return now.Add(started - sinceBoot)
}

// runtimeReader reads the language runtime among a service's processes
// (a JVM's hsperfdata through /proc/PID/root, so in another container of
// the pod too). Until it finds one it looks at every sample: the probe
// starts with the pod, and a JVM creates its file only once it runs,
// seconds later on a busy node.
type runtimeReader struct {
	name string
	p    runtime.Process
}

func (j *runtimeReader) read(pids []int) []record.RuntimeSample {
	if j.p != nil && !slices.Contains(pids, j.p.Pid()) {
		j.close() // that process is gone; look again
	}
	if j.p == nil {
		r, p, err := runtimes.All().Find("/proc", pids)
		if err != nil {
			return nil
		}
		j.name, j.p = r.Name(), p
	}
	v, err := j.p.Read()
	if err != nil {
		return nil
	}
	return []record.RuntimeSample{{Runtime: j.name, Pid: j.p.Pid(), Values: v, Setup: j.p.Setup()}}
}

func (j *runtimeReader) close() {
	if j.p != nil {
		j.p.Close()
		j.p = nil
	}
}

// LoadSpec is what `toll k8s load` sends: the trial's settings.
type LoadSpec struct {
	Requests []LoadRequest
	Rate     float64
	Users    int
	Think    time.Duration
	ThinkExp bool
	Ramp     time.Duration
	Warmup   time.Duration
	Duration time.Duration
	Timeout  time.Duration
	MaxConns int
	Quantum  time.Duration
	// NotBefore is the earliest start of the load (the several pods of
	// one Job share it); zero starts at once.
	NotBefore time.Time
}

// LoadLine is the one line `toll k8s load` prints when the load ends: the
// trial's timeline and what torecord.FillLoad records of the load generator's
// result (totals, latency histograms, per-second intervals).
type LoadLine struct {
	Start        time.Time         `json:"start"`
	MeasureStart time.Time         `json:"measure_start"`
	MeasureEnd   time.Time         `json:"measure_end"`
	Load         record.LoadTotals `json:"load"`
	Intervals    []record.Interval `json:"intervals"`
	Error        string            `json:"error,omitempty"`
}

// Load runs toll's load generator as spec says, from 100 ms from now or
// spec.NotBefore, whichever is later, and writes its LoadLine to w. An error cutting the load short is in the line
// and returned too.
func Load(ctx context.Context, w io.Writer, spec LoadSpec) error {
	cfg := load.Config{Warmup: spec.Warmup, Duration: spec.Duration, Timeout: spec.Timeout, MaxConns: spec.MaxConns,
		Start: time.Now().Add(100 * time.Millisecond).Truncate(time.Millisecond)}
	if cfg.Start.Before(spec.NotBefore) {
		cfg.Start = spec.NotBefore
	}
	for _, r := range spec.Requests {
		h := http.Header{}
		for k, v := range r.Headers {
			h.Set(k, v)
		}
		cfg.Requests = append(cfg.Requests, load.Request{Name: r.Name, Method: r.Method, URL: r.URL, Header: h, Body: []byte(r.Body), Weight: r.Weight})
	}
	if spec.Users > 0 {
		cfg.Users = &load.Users{N: spec.Users, Think: spec.Think, ExponentialThink: spec.ThinkExp, Ramp: spec.Ramp}
	} else {
		cfg.Pacer, cfg.Quantum = load.ConstantPacer{Rate: spec.Rate}, spec.Quantum
		cfg.Lull = load.Midway(load.Spacing(spec.Rate, spec.Quantum))
	}
	res, err := load.Run(ctx, cfg)
	line := LoadLine{Start: cfg.Start, MeasureStart: cfg.Start.Add(spec.Warmup)}
	if res != nil {
		var tr record.Trial
		torecord.FillLoad(&tr, res)
		line.Load, line.Intervals, line.MeasureEnd = tr.Load, tr.Intervals, res.MeasureEnd
	}
	if err != nil {
		line.Error = err.Error()
	}
	if werr := json.NewEncoder(w).Encode(line); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// SinkLine is one line of `toll k8s sink`: its counts at Time.
type SinkLine struct {
	Time   time.Time        `json:"time"`
	Counts record.Telemetry `json:"counts"`
}

// Sink runs a telemetry sink on addr and writes its counts to w every
// interval until ctx is done.
func Sink(ctx context.Context, w io.Writer, addr string, interval time.Duration) error {
	sk := sink.New()
	if err := sk.Start(addr); err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	defer func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		sk.Close(c)
	}()
	enc := json.NewEncoder(w)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := enc.Encode(SinkLine{Time: time.Now(), Counts: torecord.Telemetry(0, sk.Counts())}); err != nil {
			return fmt.Errorf("sink: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Ready checks once that every HTTP URL answers 2xx or 3xx and every TCP
// address accepts a connection: a pod's readiness probe, run in the pod's
// network, where the services' loopback addresses are.
func Ready(ctx context.Context, urls, addrs []string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("GET %s: %s", u, resp.Status)
		}
	}
	for _, a := range addrs {
		c, err := (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", a)
		if err != nil {
			return err
		}
		c.Close()
	}
	return nil
}

// ParseLoadSpec reads `toll k8s load --requests`' JSON.
func ParseLoadSpec(requests string) ([]LoadRequest, error) {
	var rs []LoadRequest
	dec := json.NewDecoder(bytes.NewReader([]byte(requests)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rs); err != nil {
		return nil, fmt.Errorf("--requests: %w", err)
	}
	if len(rs) == 0 {
		return nil, errors.New("--requests: no request")
	}
	for i, r := range rs {
		if r.URL == "" || r.Weight < 0 {
			return nil, fmt.Errorf("--requests[%d]: want a url and a weight >= 0", i)
		}
		if rs[i].Method == "" {
			rs[i].Method = http.MethodGet
		}
	}
	return rs, nil
}

// JobLine is the line `toll k8s job` prints when the job it ran ended:
// the job's timeline and costs, as a local job experiment records them.
type JobLine struct {
	// Start is the job's fork, End the exit of its process.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// UserS and SystemS are the CPU time of the job's process and of the
	// processes it waited for (wait4's rusage), MaxRSSBytes the largest
	// resident set of any one of them.
	UserS       float64 `json:"user_s"`
	SystemS     float64 `json:"system_s"`
	MaxRSSBytes uint64  `json:"max_rss_bytes"`
	// ExitCode is the job's exit status, -1 when a signal ended it.
	ExitCode int `json:"exit_code"`
	// Error says how the job failed (a status other than 0, a signal, its
	// timeout, a command that could not start); "" when it succeeded.
	Error string `json:"error,omitempty"`
}

// Job runs argv, its output on stdout and stderr, until it exits or
// timeout passes (then it and its process group are killed), and writes
// its JobLine to w. When ctx ends first (the pod is deleted) the job's
// process group gets SIGTERM, then SIGKILL after grace.
func Job(ctx context.Context, w io.Writer, argv []string, timeout, grace time.Duration) error {
	if len(argv) == 0 {
		return errors.New("job: no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	line := JobLine{Start: time.Now()}
	if err := cmd.Start(); err != nil {
		line.End, line.ExitCode, line.Error = time.Now(), -1, err.Error()
		return json.NewEncoder(w).Encode(line)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func(sig syscall.Signal) { syscall.Kill(-cmd.Process.Pid, sig) }
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timer.C:
		kill(syscall.SIGKILL)
		waitErr = <-done
		line.Error = fmt.Sprintf("timed out after %s (job.timeout) and was killed", timeout)
	case <-ctx.Done():
		kill(syscall.SIGTERM)
		select {
		case waitErr = <-done:
		case <-time.After(grace):
			kill(syscall.SIGKILL)
			waitErr = <-done
		}
		line.Error = "interrupted"
	}
	line.End = time.Now()
	if st := cmd.ProcessState; st != nil {
		line.ExitCode = st.ExitCode()
		line.UserS, line.SystemS = st.UserTime().Seconds(), st.SystemTime().Seconds()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			line.MaxRSSBytes = uint64(ru.Maxrss) * 1024
		}
		if line.Error == "" && !st.Success() {
			line.Error = "exited with " + st.String()
		}
	} else if line.Error == "" && waitErr != nil {
		line.Error = waitErr.Error()
	}
	// What the job printed is in its container's log before this line.
	return json.NewEncoder(w).Encode(line)
}

// Install copies the running toll binary to path (mode 0755): an init
// container puts it in a volume that a job's container, of another image,
// runs it from (`toll k8s job`).
func Install(path string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	in, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("install %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("install %s: %w", path, err)
	}
	return nil
}
