package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/launch"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/supervise"
)

// started is a variant whose services are running.
type started struct {
	v     *variant
	group *launch.Group
	cgs   map[string]*cgroup.Group // by service name
	runs  []record.ServiceRun
	fresh bool // no trial has run since the services started
}

// start starts variant name's services in order and waits until each is ready.
func (r *runner) start(ctx context.Context, name string) error {
	v := r.variants[name]
	st := &started{v: v, cgs: map[string]*cgroup.Group{}, fresh: true}
	r.starts[name]++
	var specs []launch.Spec
	for _, svc := range v.Services {
		cpus := svc.CPUs
		if cpus == "" {
			cpus = r.svcCPUs
			if r.s.Mode == scenario.ModeDuet {
				cpus = r.duetCPUs[1]
				if name == r.s.Baseline {
					cpus = r.duetCPUs[0]
				}
			}
		}
		argv := svc.Argv
		var cgPath string
		var shim []string
		if r.tree != nil {
			g, err := r.tree.NewGroup(name+"."+svc.Name, cgroup.Limits{CPUs: cpus, CPULimit: svc.CPULimit, MemoryLimit: int64(svc.MemoryLimit)})
			if err != nil {
				r.dropCgroups(st)
				return fmt.Errorf("variant %s: cgroup for %s: %w", name, svc.Name, err)
			}
			st.cgs[svc.Name] = g
			cgPath = g.Path()
			shim = append(shim, "--cgroup-procs", strings.Join(g.ProcsFiles(), ","))
		} else if svc.CPULimit > 0 || svc.MemoryLimit > 0 {
			r.note(fmt.Sprintf("%s: cpu_limit and memory_limit need cgroups and were not applied", svc.Name))
		}
		if cpus != "" {
			shim = append(shim, "--cpus", cpus)
		}
		// Every service runs under the _exec supervisor, which kills what
		// the service started if toll dies, and every process of the run
		// carries its label.
		argv = append(append(append([]string{r.opt.Self, "_exec"}, shim...), "--"), argv...)
		logName := fmt.Sprintf("%s.%s.%d.log", name, svc.Name, r.starts[name])
		specs = append(specs, launch.Spec{Name: name + "/" + svc.Name, Argv: argv, Env: runid.Label(svc.Env, r.id), Dir: svc.Dir,
			LogPath:     r.dir.LogPath(logName),
			Ready:       launch.Readiness{HTTP: svc.Ready.HTTP, TCP: svc.Ready.TCP, Timeout: svc.Ready.Timeout.D()},
			DeathSignal: supervise.DeathSignal})
		st.runs = append(st.runs, record.ServiceRun{Name: svc.Name, Role: svc.Role, Measured: svc.Measure || svc.Role == "agent",
			Argv: svc.Argv, Log: "logs/" + logName, Cgroup: cgPath, CPUs: cpus})
	}
	g, err := launch.StartGroup(ctx, r.kill, specs)
	if err != nil {
		r.dropCgroups(st)
		return fmt.Errorf("variant %s: %w", name, err)
	}
	st.group = g
	for i, svc := range g.Services() {
		st.runs[i].Pid = svc.Pid()
		st.runs[i].StartupS = svc.StartupTime().Seconds()
	}
	r.running[name] = st
	return nil
}

// stop stops variant name's services and removes their cgroups.
func (r *runner) stop(name string) error {
	st, ok := r.running[name]
	if !ok {
		return nil
	}
	delete(r.running, name)
	err := st.group.StopContext(r.kill, r.opt.StopGrace)
	r.dropCgroups(st)
	if err != nil {
		return fmt.Errorf("stop variant %s: %w", name, err)
	}
	return nil
}

func (r *runner) dropCgroups(st *started) {
	for _, g := range st.cgs {
		g.Kill()
		g.Delete()
	}
}

func (r *runner) note(n string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.notes {
		if x == n {
			return
		}
	}
	r.notes = append(r.notes, n)
}
