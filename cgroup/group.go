package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Group is one cgroup of a Tree, normally holding one service and everything
// it forks. Its methods are safe for concurrent use.
type Group struct {
	tree    *Tree
	name    string
	version Version
	path    string   // human-readable: the v2 directory or the v1 cpuacct directory
	dirs    []string // the group's directory in each distinct hierarchy
	procs   []string // cgroup.procs in each of dirs

	// ctrl holds the directory of each v1 controller (idxCPU...); on v2
	// all four are the one directory.
	ctrl [numV1]string
	// perfDir is the group's directory in the v1 perf_event hierarchy, or "".
	perfDir string

	// Files Stat reads, resolved once.
	cpuStat      string // v1 cpu.stat, v2 cpu.stat
	cpuacctUsage string // v1 only
	cpuacctStat  string // v1 only
	memCurrent   string // v1 memory.usage_in_bytes, v2 memory.current
	memPeak      string // v1 memory.max_usage_in_bytes, v2 memory.peak

	memLimit uint64 // read back after creation; 0 = none
}

func newGroupV1(t *Tree, name string) *Group {
	g := &Group{tree: t, name: name, version: V1}
	rel := t.rel + "/" + name
	var seen []string
	for i, m := range t.l.v1 {
		d := filepath.Join(m.dir, rel)
		g.ctrl[i] = d
		if !slices.Contains(seen, m.real) {
			seen = append(seen, m.real)
			g.dirs = append(g.dirs, d)
			g.procs = append(g.procs, filepath.Join(d, procsFile))
		}
	}
	if t.l.perfEvent != "" {
		g.perfDir = filepath.Join(t.l.perfEvent, rel)
		g.dirs = append(g.dirs, g.perfDir)
		g.procs = append(g.procs, filepath.Join(g.perfDir, procsFile))
	}
	g.path = g.ctrl[idxCPUAcct]
	g.cpuStat = filepath.Join(g.ctrl[idxCPU], "cpu.stat")
	g.cpuacctUsage = filepath.Join(g.ctrl[idxCPUAcct], "cpuacct.usage")
	g.cpuacctStat = filepath.Join(g.ctrl[idxCPUAcct], "cpuacct.stat")
	g.memCurrent = filepath.Join(g.ctrl[idxMemory], "memory.usage_in_bytes")
	g.memPeak = filepath.Join(g.ctrl[idxMemory], "memory.max_usage_in_bytes")
	return g
}

func newGroupV2(t *Tree, name string) *Group {
	d := filepath.Join(t.dirs[0], name)
	g := &Group{tree: t, name: name, version: V2, path: d,
		dirs: []string{d}, procs: []string{filepath.Join(d, procsFile)}}
	for i := range g.ctrl {
		g.ctrl[i] = d
	}
	g.cpuStat = filepath.Join(d, "cpu.stat")
	g.memCurrent = filepath.Join(d, "memory.current")
	g.memPeak = filepath.Join(d, "memory.peak")
	return g
}

// readLimit reads back the memory limit the kernel applied (v1 rounds it to
// pages), so Stat need not read it every time.
func (g *Group) readLimit() error {
	file := "memory.max"
	if g.version == V1 {
		file = "memory.limit_in_bytes"
	}
	path := filepath.Join(g.ctrl[idxMemory], file)
	var buf [64]byte
	b, err := readInto(path, buf[:])
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no memory controller (only in tests on a bare v2 mount)
	}
	if err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	if g.memLimit, err = parseLimit(b); err != nil {
		return fmt.Errorf("cgroup: parse %s: %w", path, err)
	}
	return nil
}

// Name returns the name the group was created with.
func (g *Group) Name() string { return g.name }

// PerfEventDir is the directory to open for perf_event_open's
// PERF_FLAG_PID_CGROUP: on v2 the group's own, on v1 its directory in the
// perf_event hierarchy ("" when that is not mounted).
func (g *Group) PerfEventDir() string {
	if g.version == V2 {
		return g.path
	}
	return g.perfDir
}

// Path returns a human-readable path of the group: on v2 its directory, on
// v1 its directory in the cpuacct hierarchy, e.g.
// /sys/fs/cgroup/cpuacct/toll/run-1/baseline.consumer.
func (g *Group) Path() string { return g.path }

// Rel returns the group's path from the root of each hierarchy, e.g.
// /toll/run-1/baseline.consumer: the name a container engine's
// --cgroup-parent takes (with its cgroupfs manager) to create a
// container's cgroup below the group.
func (g *Group) Rel() string { return g.tree.rel + "/" + g.name }

// ProcsFiles returns every cgroup.procs file a process must be written into
// to join the group: one per distinct hierarchy on v1 (cpu, cpuacct, cpuset,
// memory; co-mounted hierarchies appear once), one on v2. On v1 hosts with
// co-mounted cpu,cpuacct the path goes through the conventional symlink
// (/sys/fs/cgroup/cpu), so the paths contain no comma unless the tree or group
// name does.
func (g *Group) ProcsFiles() []string { return slices.Clone(g.procs) }

// Pids returns the processes in the group and in any cgroup a service
// created below it, sorted.
func (g *Group) Pids() ([]int, error) {
	pids, err := collectPids(g.dirs[:1])
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return pids, nil
}

// SetCPUs sets the group's cpuset.cpus, the CPUs its processes may run on,
// to list ("1", "0-3"). Taking CPUs away moves every thread of the group
// off them at once; a CPU added is used by a thread only if its own
// affinity (sched_setaffinity) allows it too.
func (g *Group) SetCPUs(list string) error {
	path := filepath.Join(g.ctrl[idxCPUSet], "cpuset.cpus")
	if err := os.WriteFile(path, []byte(list), 0o644); err != nil {
		return fmt.Errorf("cgroup: set CPUs %s of %s: %w", list, g.name, err)
	}
	return nil
}

// Stat is what a group has cost so far.
type Stat struct {
	// CPU, User and System are the cumulative CPU time of every process
	// that ever ran in the group, including children that have exited
	// (v2 cpu.stat usage_usec, user_usec, system_usec; v1 cpuacct.usage
	// and cpuacct.stat user/system, the latter in USER_HZ ticks, so with
	// 10ms resolution).
	CPU, User, System time.Duration
	// MemoryCurrent and MemoryPeak are the group's memory use now and at
	// its highest (v2 memory.current and memory.peak, which is 0 on kernels
	// before 5.19; v1 memory.usage_in_bytes and memory.max_usage_in_bytes).
	MemoryCurrent, MemoryPeak uint64
	// MemoryLimit is the memory limit in bytes; 0 means none.
	MemoryLimit uint64
	// NrThrottled is the number of CPU bandwidth periods in which the group
	// was throttled and Throttled the total time it was (v2 cpu.stat
	// nr_throttled, throttled_usec; v1 cpu.stat nr_throttled,
	// throttled_time).
	NrThrottled uint64
	Throttled   time.Duration
}

// Stat reads the group's cost. It is cheap enough to call every second:
// it reads only the files it needs (3 on v2, 5 on v1) into a stack buffer.
func (g *Group) Stat() (Stat, error) {
	s := Stat{MemoryLimit: g.memLimit}
	var err error
	if g.version == V1 {
		err = g.statV1(&s)
	} else {
		err = g.statV2(&s)
	}
	if err != nil {
		return Stat{}, fmt.Errorf("cgroup: stat %s: %w", g.name, err)
	}
	return s, nil
}

// Delete removes the group's cgroups (children first, should the service
// have created any). It retries briefly while killed processes exit and
// fails with EBUSY if processes remain; call Kill first. Deleting a deleted
// group is not an error.
func (g *Group) Delete() error {
	var errs []error
	for _, d := range g.dirs {
		if err := removeCgroupDir(d, removeTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cgroup: delete %s: %w", g.name, errors.Join(errs...))
	}
	g.tree.forget(g.name)
	return nil
}

// Enter moves the calling process (all its threads) into the cgroups whose
// cgroup.procs files are given, normally Group.ProcsFiles. A shim calls it
// right before exec so the service is accounted from its first instruction
// and every process it forks stays in the group.
func Enter(procsFiles []string) error {
	if len(procsFiles) == 0 {
		return errors.New("cgroup: enter: no cgroup.procs files given")
	}
	pid := strconv.Itoa(os.Getpid())
	for _, f := range procsFiles {
		if filepath.Base(f) != procsFile {
			return fmt.Errorf("cgroup: enter: %s is not a %s file", f, procsFile)
		}
		if err := writeString(f, pid); err != nil {
			return fmt.Errorf("cgroup: enter: %w", err)
		}
	}
	return nil
}

// PidsIn returns the processes in the cgroups whose cgroup.procs files are
// given (as Group.ProcsFiles returns them) and in every cgroup below them,
// sorted. A process that entered a group with Enter and must later find
// everything in it (toll's _exec supervisor) has only these paths.
func PidsIn(procsFiles []string) ([]int, error) {
	dirs := make([]string, 0, len(procsFiles))
	for _, f := range procsFiles {
		if filepath.Base(f) != procsFile {
			return nil, fmt.Errorf("cgroup: %s is not a %s file", f, procsFile)
		}
		dirs = append(dirs, filepath.Dir(f))
	}
	pids, err := collectPids(dirs)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return pids, nil
}
