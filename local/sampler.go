package local

import (
	"context"
	"sync"
	"time"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/probe"
	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/probe/machine"
	"github.com/tollperf/toll/probe/perfcount"
	"github.com/tollperf/toll/probe/runtime"
	"github.com/tollperf/toll/probe/runtimes"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/torecord"
)

// sampler reads every service's costs and the sink's counts at aligned
// ticks during a trial.
type sampler struct {
	mu        sync.Mutex
	t0        time.Time // MeasureStart: sample times are relative to it
	services  []*serviceProbe
	sink      counter
	telemetry []record.Telemetry
	machine   *machine.Sampler
	host      []record.MachineSample
}

// serviceProbe reads one service: CPU and memory from its cgroup when it has
// one, RSS, threads and files from its process tree.
type serviceProbe struct {
	name     string
	measured bool
	tree     processes
	cg       *cgroup.Group
	points   []record.Sample
	hw       *perfcount.Group
	// rt is the language runtime in the tree (a JVM, Node.js), if it runs
	// one that toll reads, and rtName its name.
	rt     runtime.Process
	rtName string

	// scrape and nmt are the service's own metrics and its JVM's Native
	// Memory Tracking, read at the window's edges (pull.go).
	scrape    *scenario.Scrape
	nmt       bool
	scrapes   []record.Scrape
	scrapeErr string
	nmtRead   *record.NMT
	nmtErr    string
}

// processes samples a service's processes: the tree below its supervisor
// (probe.ProcessTree), or a container's processes, listed from its cgroup
// (probe.Members).
type processes interface {
	probe.Sampler
	Pids() []int
}

// readRuntime reads sp's runtime, if it runs one.
func (sp *serviceProbe) readRuntime() []record.RuntimeSample {
	if sp.rt == nil {
		return nil
	}
	v, err := sp.rt.Read()
	if err != nil {
		return nil
	}
	return []record.RuntimeSample{{Runtime: sp.rtName, Pid: sp.rt.Pid(), Values: v, Setup: sp.rt.Setup()}}
}

// jvmOf returns the JVM sp's runtime is, or nil.
func (sp *serviceProbe) jvmOf() *jvm.Process {
	j, _ := sp.rt.(*jvm.Process)
	return j
}

// findJVM opens the hsperfdata of the first JVM among tree's processes as
// last sampled, or returns nil.
func findJVM(tree processes) (*jvm.Reader, int) {
	for _, pid := range tree.Pids() {
		path, err := jvm.Path(pid)
		if err != nil {
			continue
		}
		if r, err := jvm.Open(path); err == nil {
			return r, pid
		}
	}
	return nil, 0
}

// close releases what sp holds.
func (sp *serviceProbe) close() {
	if sp.rt != nil {
		sp.rt.Close()
	}
	if sp.hw != nil {
		sp.hw.Close()
	}
}

func newSampler(b *Backend, st *started, t0 time.Time) *sampler {
	s := &sampler{t0: t0, sink: b.sinkOf(st.v.Name), machine: b.machine}
	for i, svc := range st.group.Services() {
		sp := &serviceProbe{name: st.runs[i].Name, measured: st.runs[i].Measured, cg: st.cgs[st.runs[i].Name],
			scrape: st.v.Services[i].Scrape, nmt: st.v.Services[i].NMT}
		sp.tree = serviceProcesses(st, i, svc.Pid())
		if sp.tree != nil {
			// Looked for once, before the load: finding a runtime lists
			// /tmp and resolves a user, milliseconds of the load
			// generator's CPU that would hold its requests up. A service
			// is ready before its trials, and a JVM writes its
			// hsperfdata as it starts. A cgroup's members are listed
			// by a sample.
			if len(sp.tree.Pids()) == 0 {
				sp.tree.Sample()
			}
			if r, p, err := runtimes.All().Find("/proc", sp.tree.Pids()); err == nil {
				sp.rt, sp.rtName = p, r.Name()
			}
		}
		if b.hwCPUs != nil && sp.cg != nil && sp.cg.PerfEventDir() != "" {
			// Counts start with the trial; only differences are used.
			if g, err := perfcount.OpenCgroup(sp.cg.PerfEventDir(), b.hwCPUs, perfcount.Instructions, perfcount.Cycles); err == nil {
				sp.hw = g
			} else {
				b.note("hardware counters: " + err.Error())
			}
		}
		s.services = append(s.services, sp)
	}
	return s
}

// serviceProcesses returns the processes of st's service i, whose
// supervisor has pid, or nil if they cannot be listed. The pid toll knows
// is the _exec supervisor's; the service is its child, and orphans are
// reparented to it.
func serviceProcesses(st *started, i, pid int) processes {
	if cg := st.cgs[st.runs[i].Name]; st.runs[i].Container != "" && cg != nil {
		// The engine started the container's processes; they are in the
		// service's cgroup, not below the supervisor.
		if m, err := probe.NewMembers(cg.Pids); err == nil {
			return m
		}
		return nil
	}
	if tree, err := probe.NewDescendants(pid); err == nil {
		return tree
	}
	return nil
}

// loop samples at origin + k·interval until ctx is done.
func (s *sampler) loop(ctx context.Context, origin time.Time, interval time.Duration) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for k := 0; ; k++ {
		at := origin.Add(time.Duration(k) * interval)
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		s.take(time.Now())
	}
}

// take records one sample of every service and of the sink.
func (s *sampler) take(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := now.Sub(s.t0).Seconds()
	for _, sp := range s.services {
		p := record.Sample{T: t}
		ok := false
		if sp.tree != nil {
			if ps, err := sp.tree.Sample(); err == nil {
				p.CPU, p.User, p.System = ps.CPU.Seconds(), ps.User.Seconds(), ps.System.Seconds()
				p.RSS, p.Threads, p.FDs, p.Procs = ps.RSS, ps.Threads, ps.FDs, ps.Procs
				ok = true
			}
		}
		if sp.cg != nil {
			if cs, err := sp.cg.Stat(); err == nil {
				// The cgroup counts every process the service ever ran,
				// including children that have exited.
				p.CPU = cs.CPU.Seconds()
				if cs.User > 0 || cs.System > 0 {
					p.User, p.System = cs.User.Seconds(), cs.System.Seconds()
				}
				p.Memory, p.MemoryPeak = cs.MemoryCurrent, cs.MemoryPeak
				p.NrThrottled, p.Throttled = cs.NrThrottled, cs.Throttled.Seconds()
				ok = true
			}
		}
		if ok && sp.hw != nil {
			if cs, err := sp.hw.Read(); err == nil && len(cs) == 2 {
				p.Instructions, p.Cycles = cs[0].Value, cs[1].Value
			}
		}
		if ok {
			p.Runtimes = sp.readRuntime()
			sp.points = append(sp.points, p)
		}
	}
	if s.machine != nil {
		if m, err := s.machine.Sample(); err == nil {
			ms := record.MachineSample{T: t, Busy: m.Total.Busy(), Total: m.Total.Total(), Steal: m.Total.Steal, MemUsed: m.MemUsed()}
			for _, c := range m.PerCPU {
				ms.PerCPUBusy = append(ms.PerCPUBusy, c.Busy())
				ms.PerCPUTotal = append(ms.PerCPUTotal, c.Total())
			}
			s.host = append(s.host, ms)
		}
	}
	if s.sink != nil {
		s.telemetry = append(s.telemetry, torecord.Telemetry(t, s.sink.Counts()))
	}
}

// close releases the probes' resources.
func (s *sampler) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.services {
		sp.close()
	}
}

// series returns the samples per service.
func (s *sampler) series() []record.ServiceSeries {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []record.ServiceSeries
	for _, sp := range s.services {
		src := "proc"
		if sp.cg != nil {
			src = "cgroup"
		}
		out = append(out, record.ServiceSeries{Service: sp.name, Source: src, Points: sp.points,
			Scrapes: sp.scrapes, ScrapeError: sp.scrapeErr, NMT: sp.nmtRead, NMTError: sp.nmtErr})
	}
	return out
}

// cpuNow is the measured services' CPU, in cores, between the last two
// samples.
func (s *sampler) cpuNow() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cores float64
	for _, sp := range s.services {
		if n := len(sp.points); n >= 2 && sp.measured {
			a, b := sp.points[n-2], sp.points[n-1]
			if b.T > a.T {
				cores += (b.CPU - a.CPU) / (b.T - a.T)
			}
		}
	}
	return cores
}
