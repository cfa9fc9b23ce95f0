package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/containerd/cgroups/v3"
)

const (
	// selfGroup is the name of the group the calling process joins (Join).
	// Every group a service gets holds a dot (variant.service), so no
	// service's group can take it.
	selfGroup = "toll"
	// selfCgroupPath lists the calling process's cgroups.
	selfCgroupPath = "/proc/self/cgroup"
)

// Join moves the calling process, every thread of it, into a group of its
// own in the tree, at a group's default CPU weight, until Close moves it
// back where it was. On v1 it joins the cpu
// hierarchy only: where its memory is charged and which CPUs it may use
// stay as they were.
//
// The kernel gives CPU time level by level: a service's group competes
// with its siblings in the tree, and the tree as a whole with whatever
// runs beside it. An idle group (SetIdle) yields to its siblings, not to a
// process outside the tree: a service warming in an idle group took half a
// CPU from a process in the hierarchy's root, whatever its threads'
// policy. In the tree, the process is one of those siblings.
func (t *Tree) Join() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("cgroup: join tree %s: closed", t.rel)
	}
	if t.home != "" {
		return nil
	}
	legacy, unified, err := cgroups.ParseCgroupFileUnified(selfCgroupPath)
	if err != nil {
		return fmt.Errorf("cgroup: join tree %s: %w", t.rel, err)
	}
	root, from := t.l.mount, unified
	if t.l.version == V1 {
		root, from = t.l.v1[idxCPU].dir, legacy[ctrlCPU]
	}
	home := filepath.Join(root, from, procsFile)
	switch {
	case from == "" || !exists(home):
		return fmt.Errorf("cgroup: join tree %s: cannot tell which cgroup this process is in (%s names %q)", t.rel, selfCgroupPath, from)
	case strings.HasPrefix(from, "/"+tollDir+"/"):
		// Another tree's Close would move it out of this one.
		return fmt.Errorf("cgroup: join tree %s: this process is in another run's tree, %s", t.rel, from)
	}
	dir := filepath.Join(root, t.rel, selfGroup)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cgroup: join tree %s: %w", t.rel, err)
	}
	if err := writeString(filepath.Join(dir, procsFile), strconv.Itoa(os.Getpid())); err != nil {
		_ = removeCgroupDir(dir, 0)
		return fmt.Errorf("cgroup: join tree %s: %w", t.rel, err)
	}
	t.home = home
	return nil
}

// leave moves the calling process back to the cgroup it was in before
// Join, with t.mu held; processes it started since stay in its group, for
// Close to end. Leaving a tree not joined does nothing.
func (t *Tree) leave() error {
	if t.home == "" {
		return nil
	}
	if err := writeString(t.home, strconv.Itoa(os.Getpid())); err != nil {
		return fmt.Errorf("cgroup: leave tree %s: %w", t.rel, err)
	}
	t.home = ""
	return nil
}

// SetIdle makes the group idle, or no longer so: an idle group runs only
// when none of its siblings in the tree (other services' groups, and the
// process that joined the tree) has work, as its threads would under
// SCHED_IDLE. Kernels before 5.15 have no idle groups: the error then
// wraps fs.ErrNotExist.
func (g *Group) SetIdle(idle bool) error {
	v := "0"
	if idle {
		v = "1"
	}
	if err := writeString(filepath.Join(g.ctrl[idxCPU], "cpu.idle"), v); err != nil {
		return fmt.Errorf("cgroup: idle %s: %w", g.name, err)
	}
	return nil
}

// CanIdle says whether the tree's groups can be made idle (SetIdle): the
// kernel has idle groups from 5.15 on.
func (t *Tree) CanIdle() bool {
	dir := t.dirs[0]
	if t.l.version == V1 {
		dir = filepath.Join(t.l.v1[idxCPU].dir, t.rel)
	}
	return exists(filepath.Join(dir, "cpu.idle"))
}
