package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

const (
	// cfsPeriodUsec is the CPU bandwidth period toll uses for CPULimit.
	cfsPeriodUsec = 100000
	// minQuotaUsec is the smallest CPU quota the kernel accepts.
	minQuotaUsec = 1000
	// removeTimeout bounds the wait for killed processes to leave a cgroup
	// before rmdir gives up.
	removeTimeout = 2 * time.Second
)

// Limits are the resource limits of one group.
type Limits struct {
	// CPUs is a cpuset list such as "1" or "1-3,5"; empty inherits the
	// parent's CPUs.
	CPUs string
	// CPULimit is a CPU bandwidth limit in cores, applied as a quota per
	// 100ms period (0.5 = 50ms per 100ms); 0 means no limit.
	CPULimit float64
	// MemoryLimit is a memory limit in bytes; 0 means no limit.
	MemoryLimit int64
}

// cpuQuota returns the CFS quota in microseconds per cfsPeriodUsec, or 0
// for no limit.
func (l Limits) cpuQuota() (int64, error) {
	if math.IsNaN(l.CPULimit) || math.IsInf(l.CPULimit, 0) || l.CPULimit < 0 {
		return 0, fmt.Errorf("invalid CPULimit %v: want cores >= 0", l.CPULimit)
	}
	if l.CPULimit == 0 {
		return 0, nil
	}
	q := int64(math.Round(l.CPULimit * cfsPeriodUsec))
	if q < minQuotaUsec {
		return 0, fmt.Errorf("CPULimit %v is below the kernel minimum of %v cores", l.CPULimit, float64(minQuotaUsec)/cfsPeriodUsec)
	}
	return q, nil
}

// check validates the limits and returns the CPU quota (0 = none).
func (l Limits) check() (int64, error) {
	q, err := l.cpuQuota()
	if err != nil {
		return 0, err
	}
	if l.MemoryLimit < 0 {
		return 0, fmt.Errorf("invalid MemoryLimit %d: want bytes >= 0", l.MemoryLimit)
	}
	if strings.TrimSpace(l.CPUs) != l.CPUs {
		return 0, fmt.Errorf("invalid CPUs %q: surrounding space", l.CPUs)
	}
	return q, nil
}

// Tree is toll's cgroup subtree for one run: toll/<name> in every hierarchy
// toll uses. Its methods are safe for concurrent use.
type Tree struct {
	name string
	l    layout
	rel  string   // "/toll/<name>", relative to each hierarchy root
	dirs []string // the tree's directory in each distinct hierarchy

	v1 cgroup1.Cgroup   // V1 only
	v2 *cgroup2.Manager // V2 only

	mu     sync.Mutex
	groups map[string]*Group
	closed bool
	// home is the cgroup.procs file of the cgroup the calling process
	// left to join the tree (Join), or "".
	home string
}

// NewTree creates toll's subtree for one run, named toll/<name> in every
// hierarchy used (under the root of each hierarchy, see the package doc).
// name must be a single path element; a leftover empty tree of the same name
// is removed first, a tree of the same name that is still in use is an error.
func NewTree(name string) (*Tree, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("cgroup: tree: %w", err)
	}
	l, err := probe()
	if err != nil {
		return nil, err
	}
	return newTree(l, name)
}

// newTree creates a tree in the given layout.
func newTree(l layout, name string) (*Tree, error) {
	t := &Tree{
		name:   name,
		l:      l,
		rel:    "/" + tollDir + "/" + name,
		groups: map[string]*Group{},
	}
	switch l.version {
	case V1:
		t.dirs = v1Dirs(l, t.rel)
		if l.perfEvent != "" {
			t.dirs = append(t.dirs, filepath.Join(l.perfEvent, t.rel))
		}
	case V2:
		t.dirs = []string{filepath.Join(l.mount, t.rel)}
	default:
		return nil, fmt.Errorf("cgroup: unknown version %v", l.version)
	}
	for _, d := range t.dirs {
		if exists(d) {
			if err := removeCgroupDir(d, 0); err != nil {
				return nil, fmt.Errorf("cgroup: tree %s already exists and can't be removed (still in use by another toll run?): %w", d, err)
			}
		}
	}
	var err error
	// A concurrent run's Close may remove the shared toll directory between
	// our mkdirs; retry a few times in that case.
	for attempt := 0; attempt < 3; attempt++ {
		if l.version == V1 {
			err = t.createV1()
		} else {
			err = t.createV2()
		}
		if err == nil {
			return t, nil
		}
		for _, d := range t.dirs {
			_ = removeCgroupDir(d, 0)
		}
		if !errors.Is(err, unix.ENOENT) {
			break
		}
	}
	return nil, err
}

// v1Dirs returns rel in each distinct v1 hierarchy of l.
func v1Dirs(l layout, rel string) []string {
	var dirs, seen []string
	for _, m := range l.v1 {
		if !slices.Contains(seen, m.real) {
			seen = append(seen, m.real)
			dirs = append(dirs, filepath.Join(m.dir, rel))
		}
	}
	return dirs
}

// v1Hierarchy returns the containerd/cgroups subsystems for l's mounts.
func (l layout) v1Hierarchy() cgroup1.Hierarchy {
	return func() ([]cgroup1.Subsystem, error) {
		return []cgroup1.Subsystem{
			cgroup1.NewCpu(l.v1[idxCPU].libRoot),
			cgroup1.NewCpuacct(l.v1[idxCPUAcct].libRoot),
			// The cpuset controller copies cpuset.cpus and cpuset.mems
			// from the parent into every new directory that lacks them,
			// which a v1 cpuset cgroup needs before it accepts tasks.
			cgroup1.NewCpuset(l.v1[idxCPUSet].libRoot),
			cgroup1.NewMemory(l.v1[idxMemory].libRoot),
		}, nil
	}
}

func (t *Tree) createV1() error {
	cg, err := cgroup1.New(cgroup1.StaticPath(t.rel), &specs.LinuxResources{}, cgroup1.WithHierarchy(t.l.v1Hierarchy()))
	if err != nil {
		return fmt.Errorf("cgroup: create tree %s: %w", t.rel, err)
	}
	t.v1 = cg
	if t.l.perfEvent != "" {
		if err := os.MkdirAll(filepath.Join(t.l.perfEvent, t.rel), 0o755); err != nil {
			return fmt.Errorf("cgroup: create tree %s in perf_event: %w", t.rel, err)
		}
	}
	return nil
}

// PerfEvent says whether the tree's groups can be watched with
// perf_event_open per cgroup (always on v2; on v1 when the perf_event
// controller is mounted).
func (t *Tree) PerfEvent() bool { return t.l.version == V2 || t.l.perfEvent != "" }

func (t *Tree) createV2() error {
	dir := t.dirs[0]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cgroup: create tree: %w", err)
	}
	// Enable the controllers from the root down to the tree so that every
	// group below it has them.
	if len(t.l.controllers) > 0 {
		ctl := "+" + strings.Join(t.l.controllers, " +")
		for _, d := range []string{t.l.mount, filepath.Dir(dir), dir} {
			if err := writeString(filepath.Join(d, "cgroup.subtree_control"), ctl); err != nil {
				if errors.Is(err, unix.EBUSY) {
					err = fmt.Errorf("%w (the cgroup has processes of its own; on v2 controllers can only be enabled for children of a cgroup without processes, e.g. not the root of a container's cgroup namespace)", err)
				}
				return fmt.Errorf("cgroup: create tree: %w", err)
			}
		}
	}
	m, err := cgroup2.Load(t.rel, cgroup2.WithMountpoint(t.l.mount))
	if err != nil {
		return fmt.Errorf("cgroup: load tree %s: %w", dir, err)
	}
	t.v2 = m
	return nil
}

// Version returns the cgroup version of the tree.
func (t *Tree) Version() Version { return t.l.version }

// NewGroup creates a child cgroup of the tree with the limits applied. On v1
// the group exists in the cpu, cpuacct, cpuset and memory hierarchies, with
// cpuset.cpus set (inherited when CPUs is empty) and cpuset.mems copied from
// the parent; on v2 the tree has +cpu +cpuset +memory in its
// cgroup.subtree_control. The limits go to cpu.cfs_quota_us/cpu.cfs_period_us
// and memory.limit_in_bytes on v1, cpu.max and memory.max on v2.
func (t *Tree) NewGroup(name string, l Limits) (*Group, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("cgroup: group: %w", err)
	}
	quota, err := l.check()
	if err != nil {
		return nil, fmt.Errorf("cgroup: group %s: %w", name, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("cgroup: group %s: tree %s is closed", name, t.rel)
	}
	if _, ok := t.groups[name]; ok {
		return nil, fmt.Errorf("cgroup: group %s already exists in tree %s", name, t.rel)
	}
	var g *Group
	if t.l.version == V1 {
		g, err = t.newGroupV1(name, l, quota)
	} else {
		g, err = t.newGroupV2(name, l, quota)
	}
	if err != nil {
		return nil, err
	}
	t.groups[name] = g
	return g, nil
}

func (t *Tree) newGroupV1(name string, l Limits, quota int64) (*Group, error) {
	res := &specs.LinuxResources{}
	if l.CPUs != "" || quota > 0 {
		res.CPU = &specs.LinuxCPU{Cpus: l.CPUs}
		if quota > 0 {
			period := uint64(cfsPeriodUsec)
			res.CPU.Quota, res.CPU.Period = &quota, &period
		}
	}
	if l.MemoryLimit > 0 {
		res.Memory = &specs.LinuxMemory{Limit: &l.MemoryLimit}
	}
	g := newGroupV1(t, name)
	if _, err := t.v1.New(name, res); err != nil {
		for _, d := range g.dirs {
			_ = removeCgroupDir(d, 0)
		}
		return nil, fmt.Errorf("cgroup: create group %s: %w", g.path, err)
	}
	if g.perfDir != "" {
		if err := os.Mkdir(g.perfDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			for _, d := range g.dirs {
				_ = removeCgroupDir(d, 0)
			}
			return nil, fmt.Errorf("cgroup: create group %s: %w", g.perfDir, err)
		}
	}
	if err := g.readLimit(); err != nil {
		return nil, err
	}
	return g, nil
}

func (t *Tree) newGroupV2(name string, l Limits, quota int64) (*Group, error) {
	var res *cgroup2.Resources
	if l.CPUs != "" || quota > 0 || l.MemoryLimit > 0 {
		res = &cgroup2.Resources{}
		if l.CPUs != "" || quota > 0 {
			res.CPU = &cgroup2.CPU{Cpus: l.CPUs}
			if quota > 0 {
				period := uint64(cfsPeriodUsec)
				res.CPU.Max = cgroup2.NewCPUMax(&quota, &period)
			}
		}
		if l.MemoryLimit > 0 {
			res.Memory = &cgroup2.Memory{Max: &l.MemoryLimit}
		}
	}
	g := newGroupV2(t, name)
	if _, err := t.v2.NewChild(name, res); err != nil {
		_ = removeCgroupDir(g.path, 0)
		return nil, fmt.Errorf("cgroup: create group %s: %w", g.path, err)
	}
	if err := g.readLimit(); err != nil {
		return nil, err
	}
	return g, nil
}

// forget drops a deleted group from the tree.
func (t *Tree) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.groups, name)
}

// Close moves the calling process back where it was if it joined the tree
// (Join), kills every process left anywhere in the tree, removes the tree's
// cgroups (children first) and, when no other run uses it, the shared toll
// directory. It is idempotent and best effort: it carries on past errors
// and returns them joined.
func (t *Tree) Close() error {
	t.mu.Lock()
	t.closed = true
	t.groups = map[string]*Group{}
	leaveErr := t.leave()
	t.mu.Unlock()

	var errs []error
	if leaveErr != nil {
		errs = append(errs, leaveErr)
	}
	if err := killCgroups(t.l.version, t.dirs, killTimeout); err != nil {
		errs = append(errs, err)
	}
	for _, d := range t.dirs {
		if err := removeCgroupDir(d, removeTimeout); err != nil {
			errs = append(errs, err)
		}
		// Another run may still use toll/; then this fails, which is fine.
		_ = unix.Rmdir(filepath.Dir(d))
	}
	// What a container engine made below the groups in the hierarchies
	// toll does not use (its containers are gone by now).
	for _, m := range t.l.others {
		d := filepath.Join(m, t.rel)
		if err := removeCgroupDir(d, removeTimeout); err != nil {
			errs = append(errs, err)
		}
		_ = unix.Rmdir(filepath.Dir(d))
	}
	if len(errs) > 0 {
		return fmt.Errorf("cgroup: close tree %s: %w", t.rel, errors.Join(errs...))
	}
	return nil
}

// checkName accepts a single, ordinary path element.
func checkName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("invalid name %q", name)
	case len(name) > 200:
		return fmt.Errorf("name %q too long", name)
	case strings.ContainsAny(name, "/\x00\n"):
		return fmt.Errorf("invalid name %q: contains '/', NUL or newline", name)
	}
	return nil
}
