package local

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	pprof "github.com/google/pprof/profile"
	"github.com/tollperf/toll/leftover"
	"github.com/tollperf/toll/probe/profile"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/variant"
)

// profiled reports whether service i of v is to be profiled: it asks for it
// (profile: true), or it is measured and the run profiles every measured
// service (Config.Profile).
func (b *Backend) profiled(v *variant.Variant, i int, measured bool) bool {
	return v.Services[i].Profile || (b.cfg.Profile && measured)
}

// setupProfiling chooses, before anything starts, each profiled service's
// profiler and checks that it can sample here: a run asked to profile
// fails here rather than after its first window.
func (b *Backend) setupProfiling(ctx context.Context) error {
	want := b.cfg.Profile
	for _, v := range b.s.Services {
		want = want || v.Profile
	}
	if !want {
		return nil
	}
	// What the profilers and the profiled processes write, toll reads back
	// and removes: it goes to a directory of the run's own, private and
	// outside the results, which a process writing by path cannot be
	// led out of by a link put in the results' place.
	scratch, err := os.MkdirTemp("", leftover.ScratchPattern(b.id))
	if err != nil {
		return fmt.Errorf("profiling: %w", err)
	}
	b.scratch = scratch
	b.profilers = []profile.Profiler{profile.AsyncProfiler{Lib: b.cfg.AsyncProfiler}, profile.PySpy{Path: b.cfg.PySpy, Dir: scratch},
		profile.Perf{Dir: scratch}}
	// A service is sampled by one profiler in every variant: samples of
	// two profilers would compare their naming, not the variants.
	first := map[string]string{} // service → "profiler (variant)"
	var use []profile.Profiler
	var where []string
	for _, name := range slices.Sorted(maps.Keys(b.variants)) {
		v := b.variants[name]
		for i, svc := range v.Services {
			if !b.profiled(v, i, svc.Measure || svc.Role == "agent") {
				continue
			}
			p := b.profilerFor(svc)
			here := fmt.Sprintf("%s (variant %s)", p.Name(), name)
			if f, ok := first[svc.Name]; !ok {
				first[svc.Name] = here
			} else if !strings.HasPrefix(f, p.Name()+" ") {
				return fmt.Errorf("%s: profiling %s: sampled by %s but by %s: its commands must start the same runtime in every variant, else its profiles cannot be compared", b.s.Path, svc.Name, f, here)
			}
			if !slices.ContainsFunc(use, func(u profile.Profiler) bool { return u.Name() == p.Name() }) {
				use = append(use, p)
				where = append(where, fmt.Sprintf("%s (variant %s)", svc.Name, name))
			}
		}
	}
	for i, p := range use {
		if err := p.Available(ctx); err != nil {
			return fmt.Errorf("%s: profiling %s: %w", b.s.Path, where[i], err)
		}
	}
	return nil
}

// profilerFor returns the profiler that samples svc: the first runtime's
// profiler that takes its command, else perf.
func (b *Backend) profilerFor(svc variant.Service) profile.Profiler {
	if svc.Image == "" {
		// A program named by a relative path is the service directory's.
		argv := slices.Clone(svc.Argv)
		if len(argv) > 0 && strings.Contains(argv[0], "/") && !filepath.IsAbs(argv[0]) {
			argv[0] = filepath.Join(svc.Dir, argv[0])
		}
		for _, p := range b.profilers {
			if pp, ok := p.(profile.Preparer); ok {
				if _, _, ok := pp.Prepare(argv, nil, ""); ok {
					return p
				}
			}
		}
	}
	return b.profilers[len(b.profilers)-1]
}

// prepareProfiling returns the command and environment that start
// service i of variant v (its start-th start) ready for its profiler, and
// the directory the profiler keeps its data in; the service's own and ""
// when it is not profiled or its profiler need not be prepared.
func (b *Backend) prepareProfiling(v *variant.Variant, i, start int) ([]string, []string, string, error) {
	svc := v.Services[i]
	if b.profilers == nil || !b.profiled(v, i, svc.Measure || svc.Role == "agent") {
		return svc.Argv, svc.Env, "", nil
	}
	pp, ok := b.profilerFor(svc).(profile.Preparer)
	if !ok {
		return svc.Argv, svc.Env, "", nil
	}
	dir := filepath.Join(b.scratch, fmt.Sprintf("%s.%s.%d", v.Name, svc.Name, start))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, "", fmt.Errorf("profiling %s: %w", svc.Name, err)
	}
	argv, env, _ := pp.Prepare(svc.Argv, svc.Env, dir)
	return argv, env, dir, nil
}

// profiling is the sampling of a trial's profiled services, started before
// its load and stopped after it, around the window like the samplers.
type profiling struct {
	cancel   context.CancelFunc // ends perf once measure is done with it
	sessions []profile.Session
	names    []string // the profilers', in the order they were first used
	services []string
	errs     []string
}

// startProfiling starts the profiler on each of st's profiled services;
// nil when none is. Its sampling ends when it is stopped or closed, or
// when ctx is done.
func (b *Backend) startProfiling(ctx context.Context, st *started) *profiling {
	if b.profilers == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	p := profiling{cancel: cancel}
	for i, svc := range st.group.Services() {
		run := st.runs[i]
		if !b.profiled(st.v, i, run.Measured) {
			continue
		}
		p.services = append(p.services, run.Name)
		prof := b.profilerFor(st.v.Services[i])
		if !slices.Contains(p.names, prof.Name()) {
			p.names = append(p.names, prof.Name())
		}
		t := profile.Target{Service: run.Name, Dir: st.profileDirs[run.Name]}
		if cg := st.cgs[run.Name]; cg != nil && cg.PerfEventDir() != "" {
			t.Cgroup = cg.Rel()
		}
		if procs := serviceProcesses(st, i, svc.Pid()); procs != nil {
			if _, err := procs.Sample(); err == nil {
				t.Pids = procs.Pids()
			}
		}
		s, err := prof.Start(ctx, t)
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
	tp := &record.TrialProfile{Services: p.services, Profiler: strings.Join(p.names, ",")}
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
