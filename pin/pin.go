// Package pin parses CPU lists ("0", "1-3,6") and pins processes to them
// with sched_setaffinity, so that toll's load generator and the services it
// measures do not share cores.
package pin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CPUs is a set of CPU numbers.
type CPUs []int

// Parse parses a CPU list in the kernel's format: "0", "1-3", "0,2-3".
func Parse(list string) (CPUs, error) {
	var out CPUs
	seen := map[int]bool{}
	for _, part := range strings.Split(strings.TrimSpace(list), ",") {
		if part == "" {
			return nil, fmt.Errorf("CPU list %q: empty item", list)
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number", list, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: bad range %q", list, part)
			}
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// String formats the set as a CPU list, with ranges.
func (c CPUs) String() string {
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", c[i], c[j]))
		} else {
			parts = append(parts, strconv.Itoa(c[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Online returns the CPUs toll may use: the calling thread's affinity.
func Online() (CPUs, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("get CPU affinity: %w", err)
	}
	var out CPUs
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (c CPUs) set() *unix.CPUSet {
	var s unix.CPUSet
	for _, cpu := range c {
		s.Set(cpu)
	}
	return &s
}

// Process pins every thread of process pid; threads it starts later
// inherit the affinity of the thread that starts them, and a thread started
// while Process runs is pinned too (see eachThread).
func (c CPUs) Process(pid int) error {
	set := c.set()
	if err := eachThread(pid, func(tid int) error { return unix.SchedSetaffinity(tid, set) }); err != nil {
		return fmt.Errorf("pin process %d to CPUs %s: %w", pid, c, err)
	}
	return nil
}

// Idle puts every thread of process pid under SCHED_IDLE: it runs only
// when nothing else on its CPUs wants to, and a thread of normal priority
// that wakes up there preempts it at once. toll's telemetry sink runs so
// beside the load generator, which must send each request at its own time.
// Threads the process starts later inherit the policy of the thread that
// starts them.
func Idle(pid int) error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	if err := eachThread(pid, func(tid int) error { return unix.SchedSetAttr(tid, &attr, 0) }); err != nil {
		return fmt.Errorf("idle priority for process %d: %w", pid, err)
	}
	return nil
}

// Policies returns the scheduling policy and nice value of every thread of
// process pid, by thread id, to be set back with SetPolicies after a while
// at another.
func Policies(pid int) (map[int]unix.SchedAttr, error) {
	out := map[int]unix.SchedAttr{}
	err := eachThread(pid, func(tid int) error {
		a, err := unix.SchedGetAttr(tid, 0)
		if err == nil {
			out[tid] = *a
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("scheduling policies of process %d: %w", pid, err)
	}
	return out, nil
}

// SetPolicies sets every thread of process pid to its policy in saved, and a
// thread that saved does not hold (one started since) to fallback.
func SetPolicies(pid int, saved map[int]unix.SchedAttr, fallback unix.SchedAttr) error {
	err := eachThread(pid, func(tid int) error {
		a, ok := saved[tid]
		if !ok {
			a = fallback
		}
		a.Size = unix.SizeofSchedAttr
		return unix.SchedSetAttr(tid, &a, 0)
	})
	if err != nil {
		return fmt.Errorf("set scheduling policies of process %d: %w", pid, err)
	}
	return nil
}

// eachThread calls set for every thread of process pid. A thread that
// exits meanwhile is no error. Since a thread started by one not yet set
// would escape, the threads are listed again until a listing finds none
// not set yet (at most 10 times).
func eachThread(pid int, set func(tid int) error) error {
	done := map[int]bool{}
	for range 10 {
		tids, err := threads(pid)
		if err != nil {
			return err
		}
		fresh := false
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			if err := set(tid); err != nil && err != unix.ESRCH {
				return fmt.Errorf("thread %d: %w", tid, err)
			}
			done[tid], fresh = true, true
		}
		if !fresh {
			return nil
		}
	}
	return nil
}

// threads returns the thread ids of process pid, from /proc. A process
// caught exiting answers ESRCH for its task directory: it has no threads
// left to set, which is no error.
func threads(pid int) ([]int, error) {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if errors.Is(err, unix.ESRCH) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(tasks))
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
