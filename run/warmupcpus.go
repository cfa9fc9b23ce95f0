package run

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/probe"
)

// widenForWarmup puts the services of variants on r.warmupCPUs, every CPU
// toll may use (pinning.warmup: all), for their variant warm-up, and
// returns what puts them back on their own CPUs, which must run before
// their trial does. Without warm-up CPUs it does nothing. Services that
// cannot be widened keep their own CPUs (noted): the warm-up is slower,
// not wrong.
func (r *runner) widenForWarmup(variants []string) (restore func() error) {
	restore = func() error { return nil }
	if r.warmupCPUs == "" {
		return restore
	}
	type placed struct {
		variant, svc string
		cg           *cgroup.Group
		pid          int
		own          string
	}
	var widened []placed
	for _, name := range variants {
		st := r.running[name]
		if st == nil || st.group == nil {
			continue
		}
		for i, svc := range st.group.Services() {
			p := placed{variant: name, svc: st.runs[i].Name, cg: st.cgs[st.runs[i].Name], pid: svc.Pid(), own: st.runs[i].CPUs}
			if p.own == "" || st.runs[i].Container != "" {
				continue
			}
			if err := placeService(p.cg, p.pid, r.warmupCPUs); err != nil {
				r.note(fmt.Sprintf("%s/%s: its variant warm-up ran on its own CPUs %s, not on %s (pinning.warmup): %v", name, p.svc, p.own, r.warmupCPUs, err))
				_ = placeService(p.cg, p.pid, p.own)
				continue
			}
			widened = append(widened, p)
		}
	}
	return func() error {
		var errs []error
		for _, p := range widened {
			if err := placeService(p.cg, p.pid, p.own); err != nil {
				errs = append(errs, fmt.Errorf("%s/%s: back to CPUs %s after the variant warm-up: %w", p.variant, p.svc, p.own, err))
			}
		}
		return errors.Join(errs...)
	}
}

// placeService puts a service, every thread of every process in its cgroup
// (or, without one, below its supervisor pid), on the CPUs of list: the
// cgroup's cpuset first, then each thread's affinity, which toll set at the
// service's start and which a wider cpuset alone would not widen. A
// process that exits meanwhile is no error.
func placeService(cg *cgroup.Group, pid int, list string) error {
	cpus, err := pin.Parse(list)
	if err != nil {
		return err
	}
	pids := []int{pid}
	if cg != nil {
		if err := cg.SetCPUs(list); err != nil {
			return err
		}
		if pids, err = cg.Pids(); err != nil {
			return err
		}
	} else if tree, err := probe.NewProcessTree(pid); err == nil {
		pids = tree.Pids()
	} else if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else {
		return err
	}
	for _, p := range pids {
		if err := cpus.Process(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
