package local

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/probe"
)

// widenForWarmup lets the services of variants use the CPUs of list, every
// CPU toll may use (b.warmupCPUs, pinning.warmup: all) or those of them
// that the rounds leave alone (besideCPUs), for their variant warm-up, at
// idle priority (SCHED_IDLE): on the load generator's CPU they take only the
// time it leaves, so it sends the warm-up's load on time, as it would with
// the services on their own CPUs. It returns what puts them back on their
// own CPUs at their own priority, which must run before their trial does,
// and whether every service was widened. Without warm-up CPUs it does
// nothing. A service that cannot be widened keeps its own CPUs (noted):
// its warm-up is slower, not wrong.
func (b *Backend) widenForWarmup(variants []string, list string) (restore func() error, all bool) {
	restore, all = func() error { return nil }, true
	if list == "" {
		return restore, false
	}
	var widened []*widenedService
	for _, name := range variants {
		st := b.runningOf(name)
		if st == nil || st.group == nil {
			continue
		}
		for i, svc := range st.group.Services() {
			w := &widenedService{name: name + "/" + st.runs[i].Name, cg: st.cgs[st.runs[i].Name], pid: svc.Pid(), own: st.runs[i].CPUs, idleStart: st.idleStart}
			if w.own == "" || st.runs[i].Container != "" {
				continue
			}
			if err := w.widen(list); err != nil {
				b.note(fmt.Sprintf("%s: its variant warm-up ran on its own CPUs %s, not on %s (pinning.warmup): %v", w.name, w.own, list, err))
				_ = w.restore()
				all = false
				continue
			}
			widened = append(widened, w)
		}
	}
	return func() error {
		var errs []error
		for _, w := range widened {
			if err := w.restore(); err != nil {
				errs = append(errs, fmt.Errorf("%s: back to CPUs %s after the variant warm-up: %w", w.name, w.own, err))
			}
		}
		return errors.Join(errs...)
	}, all
}

// moveServices puts the services of st, each pinned to CPUs of its own, on
// the CPUs of list (their cgroups' cpusets first, then every thread's
// affinity), their scheduling policies as they are: a spare warming at idle
// priority stays so.
func (b *Backend) moveServices(st *started, list string) error {
	var errs []error
	for i, svc := range st.group.Services() {
		if st.runs[i].CPUs == "" || st.runs[i].Container != "" {
			continue
		}
		w := &widenedService{cg: st.cgs[st.runs[i].Name], pid: svc.Pid()}
		cpus, pids, err := w.confine(list)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", st.runs[i].Name, err))
			continue
		}
		for _, p := range pids {
			if err := cpus.Process(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("%s: %w", st.runs[i].Name, err))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// besideCPUs returns the CPUs on which starts warmed beside the rounds
// start, warm and wait for their turn: the warm-up CPUs that no service of
// the rounds runs on, where there is one (apart), and every warm-up CPU
// otherwise.
//
// A neighbour on a measured CPU, even at idle priority, takes its caches
// and wakes it: beside the Java agents' rounds, all on CPU 1, ten spare
// JVMs booting there and then warming on both CPUs moved an agent's CPU per
// request by 4–8 points between the phases of one start, as much as two
// starts of it differed, and a start's last rounds, with no spare beside
// them, read otherwise again.
func (b *Backend) besideCPUs() (cpus string, apart bool) {
	measured := []string{b.svcCPUs, b.duetCPUs[0], b.duetCPUs[1]}
	for _, v := range b.variants {
		for _, svc := range v.Services {
			measured = append(measured, svc.CPUs)
		}
	}
	return cpusApart(b.warmupCPUs, measured)
}

// cpusApart returns the CPUs of list that none of the lists in taken
// holds, and true; list itself and false where every one is taken or a
// list does not parse.
func cpusApart(list string, taken []string) (string, bool) {
	all, err := pin.Parse(list)
	if err != nil {
		return list, false
	}
	used := map[int]bool{}
	for _, t := range taken {
		if t == "" {
			continue
		}
		cpus, err := pin.Parse(t)
		if err != nil {
			return list, false
		}
		for _, c := range cpus {
			used[c] = true
		}
	}
	var apart pin.CPUs
	for _, c := range all {
		if !used[c] {
			apart = append(apart, c)
		}
	}
	if len(apart) == 0 {
		return list, false
	}
	return apart.String(), true
}

// widenedService is a service moved to more CPUs for its warm-up, with what
// it takes to move it back.
type widenedService struct {
	name string
	cg   *cgroup.Group // nil without cgroups
	pid  int           // its supervisor's
	own  string        // its CPUs
	// policies are its threads' scheduling policies before, by thread id,
	// and fallback the first process's main thread's, for threads and
	// processes started since.
	policies map[int]unix.SchedAttr
	fallback *unix.SchedAttr
	// idleStart is set for a service started at idle priority: what it
	// goes back to is the default policy, not the one widen finds.
	idleStart bool
}

// widen puts the service on the CPUs of list at idle priority: its cgroup's
// cpuset first, and its cgroup idle, then each thread's affinity (which
// toll set at the service's start, and which a wider cpuset alone would
// not widen) and policy.
func (w *widenedService) widen(list string) error {
	cpus, pids, err := w.confine(list)
	if err != nil {
		return err
	}
	if err := w.idle(true); err != nil {
		return err
	}
	w.policies = map[int]unix.SchedAttr{}
	if w.idleStart {
		w.fallback = &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
	}
	for _, p := range pids {
		err := w.save(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := cpus.Process(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := pin.Idle(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// save keeps the scheduling policies of process p's threads, to be set
// back by restore, and takes its main thread's as the fallback for threads
// started since, unless the service started at idle priority: then what it
// goes back to is the default policy, set by widen.
func (w *widenedService) save(p int) error {
	if w.idleStart {
		return nil
	}
	saved, err := pin.Policies(p)
	if err != nil {
		return err
	}
	if main, ok := saved[p]; ok && w.fallback == nil {
		w.fallback = &main
	}
	maps.Copy(w.policies, saved)
	return nil
}

// restore puts the service back on its own CPUs (the cgroup's cpuset
// first: every thread leaves the other CPUs at once) at the policies it
// had, its cgroup no longer idle.
func (w *widenedService) restore() error {
	cpus, pids, err := w.confine(w.own)
	if err != nil {
		return err
	}
	if err := w.idle(false); err != nil {
		return err
	}
	for _, p := range pids {
		if err := cpus.Process(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if w.fallback == nil {
			continue
		}
		if err := pin.SetPolicies(p, w.policies, *w.fallback); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// idle makes the service's cgroup idle, or no longer so: its threads'
// idle priority holds against their group's siblings too, the load
// generator's among them (cgroup.Tree.Join). Without a cgroup, or on a
// kernel without idle groups, the threads' priority is all there is.
func (w *widenedService) idle(on bool) error {
	if w.cg == nil {
		return nil
	}
	if err := w.cg.SetIdle(on); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// confine sets the service's cgroup's cpuset to the CPUs of list, and
// returns them with the service's processes, whose threads' affinity its
// caller sets (a wider cpuset alone does not widen what toll pinned).
func (w *widenedService) confine(list string) (pin.CPUs, []int, error) {
	cpus, err := pin.Parse(list)
	if err != nil {
		return nil, nil, err
	}
	if w.cg != nil {
		if err := w.cg.SetCPUs(list); err != nil {
			return nil, nil, err
		}
	}
	pids, err := w.pids()
	if err != nil {
		return nil, nil, err
	}
	return cpus, pids, nil
}

// pids lists the service's processes: those in its cgroup, or without one,
// its supervisor and the processes below it. None is no error: it exited.
func (w *widenedService) pids() ([]int, error) {
	if w.cg != nil {
		return w.cg.Pids()
	}
	tree, err := probe.NewProcessTree(w.pid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return tree.Pids(), nil
}
