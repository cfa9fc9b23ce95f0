package probe

import (
	"fmt"
	"io/fs"
	"math"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

var _ Sampler = (*ProcessTree)(nil)

// ProcessTree samples a process and all its descendants: the children a
// shell wrapper or a launcher starts, and theirs. Descendants are found
// anew at each sample, so processes that come and go are followed.
//
// Descendants are found by parent pid. A process whose parent exits is
// reparented by the kernel (to init or a subreaper) and leaves the tree, as
// does the daemon of a double fork; use a cgroup sampler to account for
// those.
//
// To find descendants it must know every process's parent. Reading
// /proc/*/stat for each process at each sample costs about 50 µs of CPU per
// process on a small VM, most of it in the kernel; instead, ProcessTree
// lists /proc at each sample and remembers each process's parent from the
// first time it saw it. A parent pid only changes when the parent exits, so
// a remembered one is read again only when the parent is no longer listed,
// and the processes of the tree themselves are read afresh at every sample.
// A sample thus costs one directory listing plus the reads for the tree's
// own processes and the processes started since the last sample.
//
// Its methods are safe for concurrent use.
type ProcessTree struct {
	fs        procfs.FS
	root      int
	rootStart uint64 // start time of root, to tell it from a later process reusing its pid
	below     bool   // count root's descendants only (root is a supervisor)

	mu    sync.Mutex
	gen   uint64            // generation of the latest listing
	known map[int]procEntry // processes listed in /proc at the latest sample
	kids  map[int][]int     // children by parent, from known
	queue []visit           // scratch space for the walk
}

// procEntry is what ProcessTree remembers of a process.
type procEntry struct {
	proc procfs.Proc
	ppid int
	seen uint64 // generation of the latest listing that had it
}

// visit is a process to read during the walk of the tree.
type visit struct {
	pid, parent int
}

// NewProcessTree returns a sampler of the process pid and its descendants.
// It fails if pid does not exist.
func NewProcessTree(pid int) (*ProcessTree, error) {
	return newProcessTree(pid, false)
}

// NewDescendants returns a sampler of the descendants of the process pid,
// not of pid itself: the tree below a supervisor (toll's _exec, a child
// subreaper) whose own memory, threads and files are not the service's.
// The CPU of the children pid has reaped still counts (its cutime and
// cstime), and so do the orphans reparented to it. It fails if pid does
// not exist.
func NewDescendants(pid int) (*ProcessTree, error) {
	return newProcessTree(pid, true)
}

func newProcessTree(pid int, below bool) (*ProcessTree, error) {
	procFS, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("process tree of %d: %w", pid, err)
	}
	p, err := procFS.Proc(pid)
	if err != nil {
		return nil, fmt.Errorf("process tree of %d: %w", pid, err)
	}
	st, err := p.Stat()
	if err != nil {
		return nil, fmt.Errorf("process tree of %d: %w", pid, err)
	}
	if st.State == "Z" {
		return nil, fmt.Errorf("process tree of %d: %w", pid, exited(pid))
	}
	t := &ProcessTree{
		fs:        procFS,
		root:      pid,
		rootStart: st.Starttime,
		below:     below,
		known:     make(map[int]procEntry),
		kids:      make(map[int][]int),
	}
	if _, err := t.Sample(); err != nil {
		return nil, err
	}
	return t, nil
}

// Pid returns the pid of the root of the tree.
func (t *ProcessTree) Pid() int { return t.root }

// Sample reads the costs of the tree. Once the root process has exited
// (zombies count as exited), it returns an error matching fs.ErrNotExist.
func (t *ProcessTree) Sample() (Sample, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Sample{Time: time.Now()}
	if err := t.refresh(); err != nil {
		return Sample{}, fmt.Errorf("sample process tree of %d: %w", t.root, err)
	}
	var user, system uint64 // clock ticks
	t.queue = append(t.queue[:0], visit{pid: t.root})
	for len(t.queue) > 0 {
		v := t.queue[0]
		t.queue = t.queue[1:]
		e, ok := t.known[v.pid]
		if !ok {
			if v.pid == t.root {
				return Sample{}, fmt.Errorf("sample process tree of %d: %w", t.root, exited(t.root))
			}
			continue
		}
		st, err := e.proc.Stat()
		if v.pid == t.root {
			if err == nil && (st.Starttime != t.rootStart || st.State == "Z") {
				err = exited(t.root)
			}
			if err != nil {
				return Sample{}, fmt.Errorf("sample process tree of %d: %w", t.root, err)
			}
		} else if err != nil {
			continue // exited since the listing
		} else if st.PPID != v.parent {
			// Reparented since we remembered its parent: it left the tree.
			e.ppid = st.PPID
			t.known[v.pid] = e
			continue
		}
		user += uint64(st.CUTime)
		system += uint64(st.CSTime)
		for _, kid := range t.kids[v.pid] {
			t.queue = append(t.queue, visit{pid: kid, parent: v.pid})
		}
		if v.pid == t.root && t.below {
			continue
		}
		user += uint64(st.UTime)
		system += uint64(st.STime)
		s.RSS += uint64(st.ResidentMemory())
		s.Threads += st.NumThreads
		s.Procs++
		if n, err := e.proc.FileDescriptorsLen(); err == nil {
			s.FDs += n
		}
	}
	s.User = ticksToDuration(user)
	s.System = ticksToDuration(system)
	s.CPU = s.User + s.System
	return s, nil
}

// Pids returns the pids of the tree as of the latest sample, root first.
func (t *ProcessTree) Pids() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := []int{t.root}
	for i := 0; i < len(out); i++ {
		out = append(out, t.kids[out[i]]...)
	}
	return out
}

// refresh lists /proc, learns the parents of new processes and of those
// whose parent has vanished, forgets vanished processes, and rebuilds kids.
func (t *ProcessTree) refresh() error {
	procs, err := t.fs.AllProcs()
	if err != nil {
		return err
	}
	t.gen++
	for _, p := range procs {
		e, ok := t.known[p.PID]
		if !ok {
			st, err := p.Stat()
			if err != nil {
				continue // exited since the listing
			}
			e = procEntry{proc: p, ppid: st.PPID}
		}
		e.seen = t.gen
		t.known[p.PID] = e
	}
	clear(t.kids)
	for pid, e := range t.known {
		if e.seen != t.gen {
			delete(t.known, pid)
			continue
		}
		if parent, ok := t.known[e.ppid]; e.ppid != 0 && (!ok || parent.seen != t.gen) {
			st, err := e.proc.Stat()
			if err != nil {
				delete(t.known, pid)
				continue
			}
			e.ppid = st.PPID
			t.known[pid] = e
		}
		t.kids[e.ppid] = append(t.kids[e.ppid], pid)
	}
	return nil
}

// exited returns the error for a root process that has exited.
func exited(pid int) error {
	return fmt.Errorf("process %d has exited: %w", pid, fs.ErrNotExist)
}

// ticksToDuration converts CPU time in clock ticks to a duration, with the
// conversion procfs uses.
func ticksToDuration(ticks uint64) time.Duration {
	seconds := procfs.ProcStat{UTime: uint(ticks)}.CPUTime()
	return time.Duration(math.Round(seconds * float64(time.Second)))
}
