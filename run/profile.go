package run

import (
	"context"
	"fmt"
	"strings"
	"time"

	pprof "github.com/google/pprof/profile"
	"github.com/tollperf/toll/probe/profile"
	"github.com/tollperf/toll/record"
)

// profiled reports whether service i of v is to be profiled: it asks for it
// (profile: true), or it is measured and the run profiles every measured
// service (Options.Profile).
func (r *runner) profiled(v *Variant, i int, measured bool) bool {
	return v.Services[i].Profile || (r.opt.Profile && measured)
}

// setupProfiling checks, before anything starts, that the services to be
// profiled can be: a run asked to profile fails here rather than after
// its first window.
func (r *runner) setupProfiling(ctx context.Context) error {
	want := r.opt.Profile
	for _, v := range r.s.Services {
		want = want || v.Profile
	}
	if !want {
		return nil
	}
	r.profiler = &profile.Perf{Dir: r.dir.Path}
	if err := r.profiler.Available(ctx); err != nil {
		return fmt.Errorf("%s: profiling: %w", r.s.Path, err)
	}
	return nil
}

// profiling is the sampling of a trial's profiled services, started before
// its load and stopped after it, around the window like the samplers.
type profiling struct {
	cancel   context.CancelFunc // ends perf once measure is done with it
	sessions []profile.Session
	services []string
	errs     []string
}

// startProfiling starts the profiler on each of st's profiled services;
// nil when none is. Its sampling ends when it is stopped or closed, or
// when ctx is done.
func (r *runner) startProfiling(ctx context.Context, st *started) *profiling {
	if r.profiler == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	p := profiling{cancel: cancel}
	for i, svc := range st.group.Services() {
		run := st.runs[i]
		if !r.profiled(st.v, i, run.Measured) {
			continue
		}
		p.services = append(p.services, run.Name)
		t := profile.Target{Service: run.Name}
		if cg := st.cgs[run.Name]; cg != nil && cg.PerfEventDir() != "" {
			t.Cgroup = cg.Rel()
		} else if procs := serviceProcesses(st, i, svc.Pid()); procs != nil {
			if _, err := procs.Sample(); err == nil {
				t.Pids = procs.Pids()
			}
		}
		s, err := r.profiler.Start(ctx, t)
		if err != nil {
			p.errs = append(p.errs, err.Error())
			continue
		}
		p.sessions = append(p.sessions, s)
	}
	if len(p.services) == 0 {
		cancel()
		return nil
	}
	return &p
}

// close ends what p has not stopped.
func (p *profiling) close() {
	if p != nil {
		p.cancel()
	}
}

// stop stops the sampling, keeps the stacks of the window [from, to) and
// writes them as tr's profile.
func (p *profiling) stop(dir *record.Dir, tr *record.Trial, from, to time.Time) {
	if p == nil {
		return
	}
	tp := &record.TrialProfile{Services: p.services, Profiler: "perf"}
	tr.Profile = tp
	var profs []*pprof.Profile
	for _, s := range p.sessions {
		prof, err := s.Stop(profile.Window{Start: from, End: to})
		if err != nil {
			p.errs = append(p.errs, err.Error())
			continue
		}
		profs = append(profs, prof)
	}
	defer func() { tp.Error = strings.Join(p.errs, "; ") }()
	if len(profs) == 0 {
		if len(p.errs) == 0 {
			p.errs = append(p.errs, "no profile")
		}
		return
	}
	merged, err := pprof.Merge(profs)
	if err == nil {
		name := record.TrialProfileFile(tr)
		if err = dir.WriteProfile(name, merged); err == nil {
			tp.File = name
		}
	}
	if err != nil {
		p.errs = append(p.errs, err.Error())
	}
}
