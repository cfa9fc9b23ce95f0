package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Version is a cgroup version: V1 (legacy, one hierarchy per controller) or
// V2 (the unified hierarchy).
type Version int

const (
	// V1 is the legacy cgroup interface: cpu, cpuacct, cpuset and memory
	// are separate (or partly co-mounted) hierarchies.
	V1 Version = 1
	// V2 is the unified cgroup hierarchy.
	V2 Version = 2
)

// String returns "v1" or "v2".
func (v Version) String() string {
	switch v {
	case V1:
		return "v1"
	case V2:
		return "v2"
	}
	return "Version(" + strconv.Itoa(int(v)) + ")"
}

const (
	// unifiedMount is where toll expects the unified hierarchy on a v2 host.
	unifiedMount = "/sys/fs/cgroup"
	// mountinfoPath lists the mounts of the calling process.
	mountinfoPath = "/proc/self/mountinfo"
	// tollDir is the directory under each hierarchy root holding every tree.
	tollDir = "toll"

	ctrlCPU     = "cpu"
	ctrlCPUAcct = "cpuacct"
	ctrlCPUSet  = "cpuset"
	ctrlMemory  = "memory"
)

// Indexes of the v1 controllers toll uses, in v1Controllers order.
const (
	idxCPU = iota
	idxCPUAcct
	idxCPUSet
	idxMemory
	numV1
)

// v1Controllers returns the v1 controllers toll needs, indexed by idxCPU...
func v1Controllers() [numV1]string {
	return [numV1]string{ctrlCPU, ctrlCPUAcct, ctrlCPUSet, ctrlMemory}
}

// v2Controllers returns the controllers toll enables on v2.
func v2Controllers() []string {
	return []string{ctrlCPU, ctrlCPUSet, ctrlMemory}
}

// layout says where toll's cgroups go on this machine.
type layout struct {
	version Version

	// v2: the unified mountpoint and the controllers to enable in
	// cgroup.subtree_control on the way down to every group.
	mount       string
	controllers []string

	// v1: one mount per controller, indexed by idxCPU...
	v1 [numV1]v1Mount
	// perfEvent is where the optional v1 perf_event controller is mounted
	// (writable), or "": groups join it too, so hardware events can be
	// counted per group.
	perfEvent string
	// others are the mountpoints of the v1 host's other writable
	// hierarchies (pids, blkio, name=systemd, the hybrid unified one…),
	// where toll makes nothing but a container engine that puts a
	// container below a group makes the group's path: toll removes its
	// trees there too.
	others []string
}

// v1Mount is where one v1 controller is mounted.
type v1Mount struct {
	controller string
	// dir is the path toll uses for the hierarchy: <libRoot>/<controller>,
	// which is either the mountpoint itself or, for co-mounted
	// controllers, the usual symlink to it (/sys/fs/cgroup/cpu ->
	// cpu,cpuacct). Using it keeps commas out of the paths toll hands out.
	dir string
	// libRoot is the parent directory given to containerd/cgroups, which
	// addresses a controller as <root>/<controller name>.
	libRoot string
	// real is dir with symlinks resolved; equal real paths are the same
	// hierarchy.
	real string
}

// mountEntry is one line of /proc/self/mountinfo, reduced to what toll needs.
type mountEntry struct {
	mountpoint string
	fstype     string
	readOnly   bool     // per-mount "ro" option
	superOpts  []string // e.g. [rw cpu cpuacct]
}

// Detect says which cgroup version toll can use here: V2 if the unified
// hierarchy is mounted at /sys/fs/cgroup with the cpu, cpuset and memory
// controllers available and writable, else V1 if the cpu, cpuacct, cpuset and
// memory v1 controllers are mounted and writable. Otherwise it returns an
// error that says why neither is usable (not root, read-only, not mounted,
// controllers missing).
func Detect() (Version, error) {
	l, err := probe()
	if err != nil {
		return 0, err
	}
	return l.version, nil
}

// probe works out the layout of this machine, preferring v2.
func probe() (layout, error) {
	data, err := os.ReadFile(mountinfoPath)
	if err != nil {
		return layout{}, fmt.Errorf("cgroup: read %s: %w", mountinfoPath, err)
	}
	entries, err := parseMountinfo(data)
	if err != nil {
		return layout{}, fmt.Errorf("cgroup: parse %s: %w", mountinfoPath, err)
	}
	l2, err2 := probeV2(entries, unifiedMount)
	if err2 == nil {
		return l2, nil
	}
	l1, err1 := probeV1(entries)
	if err1 == nil {
		return l1, nil
	}
	return layout{}, fmt.Errorf("cgroup: no usable cgroup hierarchy (euid %d): v2: %v; v1: %v", os.Geteuid(), err2, err1)
}

// probeV2 checks for a usable unified hierarchy mounted at root.
func probeV2(entries []mountEntry, root string) (layout, error) {
	e, ok := findV2Mount(entries, root)
	if !ok {
		return layout{}, fmt.Errorf("no cgroup2 filesystem mounted at %s", root)
	}
	if e.readOnly {
		return layout{}, fmt.Errorf("cgroup2 at %s is mounted read-only", root)
	}
	path := filepath.Join(root, "cgroup.controllers")
	data, err := os.ReadFile(path)
	if err != nil {
		return layout{}, fmt.Errorf("read %s: %w", path, err)
	}
	have := strings.Fields(string(data))
	var missing []string
	for _, c := range v2Controllers() {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return layout{}, fmt.Errorf("controllers %s not available in %s (have %q)", strings.Join(missing, ", "), path, strings.TrimSpace(string(data)))
	}
	if err := checkWritable(root); err != nil {
		return layout{}, err
	}
	return layout{version: V2, mount: root, controllers: v2Controllers()}, nil
}

// probeV1 checks that the v1 controllers toll needs are mounted and writable.
func probeV1(entries []mountEntry) (layout, error) {
	mounts, err := selectV1Mounts(entries)
	if err != nil {
		return layout{}, err
	}
	l := layout{version: V1}
	for i, e := range mounts {
		ctrl := v1Controllers()[i]
		if e.readOnly {
			return layout{}, fmt.Errorf("%s controller is mounted read-only at %s", ctrl, e.mountpoint)
		}
		m, err := resolveV1Mount(ctrl, e.mountpoint)
		if err != nil {
			return layout{}, err
		}
		if err := checkWritable(m.real); err != nil {
			return layout{}, err
		}
		l.v1[i] = m
	}
	for _, e := range entries {
		if e.fstype == "cgroup" && !e.readOnly && slices.Contains(e.superOpts, "perf_event") && checkWritable(e.mountpoint) == nil {
			l.perfEvent = e.mountpoint
		}
	}
	used := []string{l.perfEvent}
	for _, m := range l.v1 {
		used = append(used, m.real)
	}
	for _, e := range entries {
		if (e.fstype == "cgroup" || e.fstype == "cgroup2") && !e.readOnly {
			real, err := filepath.EvalSymlinks(e.mountpoint)
			if err == nil && !slices.Contains(used, real) && !slices.Contains(used, e.mountpoint) {
				used = append(used, real)
				l.others = append(l.others, e.mountpoint)
			}
		}
	}
	return l, nil
}

// resolveV1Mount finds the <root>/<controller> path containerd/cgroups will
// use for a controller mounted at mountpoint.
func resolveV1Mount(ctrl, mountpoint string) (v1Mount, error) {
	real, err := filepath.EvalSymlinks(mountpoint)
	if err != nil {
		return v1Mount{}, fmt.Errorf("resolve %s: %w", mountpoint, err)
	}
	root := filepath.Dir(mountpoint)
	dir := filepath.Join(root, ctrl)
	if dir != mountpoint {
		// Co-mounted, e.g. cpu,cpuacct: use the conventional symlink.
		r, err := filepath.EvalSymlinks(dir)
		if err != nil || r != real {
			return v1Mount{}, fmt.Errorf("%s controller is mounted at %s but %s does not lead there (toll needs <dir>/%s for every v1 controller)", ctrl, mountpoint, dir, ctrl)
		}
	}
	return v1Mount{controller: ctrl, dir: dir, libRoot: root, real: real}, nil
}

// checkWritable reports why dir can't be written to (read-only, not root).
func checkWritable(dir string) error {
	err := unix.Access(dir, unix.W_OK)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("%s is on a read-only filesystem", dir)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("no write access to %s (toll must run as root)", dir)
	}
	return fmt.Errorf("access %s: %w", dir, err)
}

// findV2Mount returns the last cgroup2 mount at root (later mounts shadow
// earlier ones).
func findV2Mount(entries []mountEntry, root string) (mountEntry, bool) {
	var found mountEntry
	ok := false
	for _, e := range entries {
		if e.mountpoint == root {
			// Anything mounted later at the same place hides the cgroup2.
			found, ok = e, e.fstype == "cgroup2"
		}
	}
	return found, ok
}

// selectV1Mounts returns the mount of each controller toll needs, indexed by
// idxCPU..., or an error naming the missing ones.
func selectV1Mounts(entries []mountEntry) ([numV1]mountEntry, error) {
	var out [numV1]mountEntry
	var missing []string
	for i, ctrl := range v1Controllers() {
		found := false
		for _, e := range entries {
			if e.fstype == "cgroup" && slices.Contains(e.superOpts, ctrl) {
				out[i], found = e, true // the last one wins
			}
		}
		if !found {
			missing = append(missing, ctrl)
		}
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("v1 controllers not mounted: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// parseMountinfo parses the contents of /proc/<pid>/mountinfo (see proc(5)):
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
func parseMountinfo(data []byte) ([]mountEntry, error) {
	var out []mountEntry
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		fields := strings.Fields(string(line))
		sep := slices.Index(fields, "-")
		if sep < 6 || len(fields) < sep+3 {
			return nil, fmt.Errorf("malformed line %q", line)
		}
		out = append(out, mountEntry{
			mountpoint: unescapeMountinfo(fields[4]),
			fstype:     fields[sep+1],
			readOnly:   slices.Contains(strings.Split(fields[5], ","), "ro"),
			superOpts:  strings.Split(fields[sep+3], ","),
		})
	}
	return out, nil
}

// unescapeMountinfo undoes the octal escapes (\040 for space, ...) the kernel
// uses for paths in mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
