package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// killTimeout bounds how long Kill waits for a group to become empty.
const killTimeout = 3 * time.Second

// Kill sends SIGKILL to every process in the group (and in any cgroup below
// it) and waits briefly until the group is empty. On v2 it writes 1 to
// cgroup.kill when the kernel has it (5.14+), which also catches processes
// forked meanwhile; otherwise, and on v1, it signals the listed pids until
// none are left. Kill never waits for (reaps) the processes: whoever started
// them still gets their exit status. It refuses to kill the calling process.
func (g *Group) Kill() error {
	if err := killCgroups(g.version, g.dirs, killTimeout); err != nil {
		return fmt.Errorf("cgroup: kill %s: %w", g.name, err)
	}
	return nil
}

// killCgroups kills every process in the cgroups at dirs and below them and
// waits up to timeout until they are all gone. dirs that don't exist are
// empty.
func killCgroups(v Version, dirs []string, timeout time.Duration) error {
	self := os.Getpid()
	pids, err := collectPids(dirs)
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return nil
	}
	if slices.Contains(pids, self) {
		return fmt.Errorf("refusing to kill the calling process %d, which is in %s", self, dirs[0])
	}
	if v == V2 {
		for _, d := range dirs {
			err := writeString(filepath.Join(d, "cgroup.kill"), "1")
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		for _, pid := range pids {
			if pid == self {
				return fmt.Errorf("refusing to kill the calling process %d, which joined %s", self, dirs[0])
			}
			if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("kill %d: %w", pid, err)
			}
		}
		time.Sleep(retryInterval)
		if pids, err = collectPids(dirs); err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d process(es) still in %s after %v: %v", len(pids), dirs[0], timeout, pids[:min(len(pids), 10)])
		}
	}
}
