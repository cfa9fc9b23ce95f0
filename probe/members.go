package probe

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// Members samples a set of processes that a function lists afresh at every
// sample, such as the processes of a cgroup: a container's, which are not
// descendants of any process toll started. CPU counts only the processes
// listed now (and the children they reaped); a cgroup's own counter is the
// one to read for CPU.
//
// Its methods are safe for concurrent use.
type Members struct {
	fs   procfs.FS
	list func() ([]int, error)

	mu   sync.Mutex
	pids []int // as of the latest sample
}

var _ Sampler = (*Members)(nil)

// NewMembers returns a sampler of the processes list returns.
func NewMembers(list func() ([]int, error)) (*Members, error) {
	procFS, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	return &Members{fs: procFS, list: list}, nil
}

// Sample reads the costs of the processes listed now. An empty list is a
// sample of nothing, not an error: the processes' holder decides whether
// they are gone.
func (m *Members) Sample() (Sample, error) {
	s := Sample{Time: time.Now()}
	pids, err := m.list()
	if err != nil {
		return Sample{}, fmt.Errorf("members: %w", err)
	}
	var user, system uint64
	var live []int
	for _, pid := range pids {
		p, err := m.fs.Proc(pid)
		if err != nil {
			continue
		}
		st, err := p.Stat()
		if err != nil || st.State == "Z" {
			continue // exited since the listing
		}
		live = append(live, pid)
		user += uint64(st.UTime) + uint64(st.CUTime)
		system += uint64(st.STime) + uint64(st.CSTime)
		s.RSS += uint64(st.ResidentMemory())
		s.Threads += st.NumThreads
		s.Procs++
		if n, err := p.FileDescriptorsLen(); err == nil {
			s.FDs += n
		}
	}
	s.User, s.System = ticksToDuration(user), ticksToDuration(system)
	s.CPU = s.User + s.System
	m.mu.Lock()
	m.pids = live
	m.mu.Unlock()
	return s, nil
}

// Pids returns the processes of the latest sample.
func (m *Members) Pids() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.pids)
}
