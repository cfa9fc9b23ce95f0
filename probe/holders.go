package probe

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/procfs"
)

// pfKthread is the flag of a kernel thread in /proc/PID/stat (PF_KTHREAD).
const pfKthread = 0x00200000

// TaskTimes is a reading of the CPU time of the machine's tasks (threads),
// by thread ID, with the CPU each last ran on.
type TaskTimes map[int]TaskTime

// TaskTime is one task's CPU time so far and the CPU it last ran on.
type TaskTime struct {
	PID    int    // its process
	Comm   string // its process's name (a kernel thread's own)
	Kernel bool   // a kernel thread
	CPU    time.Duration
	Last   int // the CPU it last ran on
}

// Holder is a process (or kernel thread) that ran on a set of CPUs between
// two readings.
type Holder struct {
	Name   string
	PID    int
	Kernel bool
	CPU    time.Duration // its CPU time between the readings
}

// ReadTaskTimes reads every task of the machine but those of the processes
// skip says to leave out (nil: none): each thread's CPU time from
// /proc/PID/task/TID/schedstat (in nanoseconds, where stat counts ticks)
// and the CPU it last ran on from its stat. Tasks that end meanwhile are
// left out. It gives up with ctx's error when ctx is done first: a machine
// of many thousands of threads takes long to read.
func ReadTaskTimes(ctx context.Context, skip func(pid, ppid int) bool) (TaskTimes, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("task times: %w", err)
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("task times: %w", err)
	}
	out := TaskTimes{}
	for _, p := range procs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("task times: %w", err)
		}
		ps, err := p.Stat()
		if err != nil {
			continue // ended since the listing
		}
		if skip != nil && skip(p.PID, ps.PPID) {
			continue
		}
		if ps.NumThreads <= 1 {
			// One thread: the process's own files are its.
			if ss, err := p.Schedstat(); err == nil {
				out[p.PID] = taskTime(p.PID, ps, ss)
			}
			continue
		}
		threads, err := fs.AllThreads(p.PID)
		if err != nil {
			continue
		}
		for _, t := range threads {
			ts, err := t.Stat()
			if err != nil {
				continue
			}
			ss, err := t.Schedstat()
			if err != nil {
				continue
			}
			tt := taskTime(p.PID, ts, ss)
			tt.Comm = ps.Comm
			out[t.PID] = tt
		}
	}
	return out, nil
}

// taskTime is the TaskTime of a thread of process pid from its stat and
// schedstat.
func taskTime(pid int, st procfs.ProcStat, ss procfs.ProcSchedstat) TaskTime {
	return TaskTime{PID: pid, Comm: st.Comm, Kernel: st.Flags&pfKthread != 0,
		CPU: time.Duration(ss.RunningNanoseconds), Last: int(st.Processor)}
}

// Holders returns the processes whose tasks ran between readings before and
// after and last ran, at after, on one of cpus: each with its tasks' CPU
// time meanwhile, those of at least least, most first. A task that
// migrated is counted whole where it ended, so the figures say who, not
// exactly how much.
func Holders(before, after TaskTimes, cpus []int, least time.Duration) []Holder {
	byPID := map[int]*Holder{}
	for tid, a := range after {
		b, ok := before[tid]
		if !ok || !slices.Contains(cpus, a.Last) || a.CPU <= b.CPU {
			continue
		}
		h := byPID[a.PID]
		if h == nil {
			h = &Holder{Name: a.Comm, PID: a.PID, Kernel: a.Kernel}
			byPID[a.PID] = h
		}
		h.CPU += a.CPU - b.CPU
	}
	var hs []Holder
	for _, h := range byPID {
		if h.CPU >= least {
			hs = append(hs, *h)
		}
	}
	slices.SortFunc(hs, func(x, y Holder) int {
		return cmp.Or(cmp.Compare(y.CPU, x.CPU), cmp.Compare(x.PID, y.PID))
	})
	return hs
}
