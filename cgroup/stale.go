package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// RemoveStale removes the trees of runs that are gone: every tree under
// toll's directory for which inUse(name) is false has its processes killed
// and its cgroups removed. A run that was killed outright (SIGKILL) cannot
// clean up after itself; the next run, or `toll cleanup`, does it. It
// returns the names of the trees it removed, also with an error.
func RemoveStale(inUse func(tree string) bool) ([]string, error) {
	l, err := probe()
	if err != nil {
		return nil, err
	}
	var roots []string
	switch l.version {
	case V1:
		roots = v1Dirs(l, tollDir)
		for _, m := range l.others {
			roots = append(roots, filepath.Join(m, tollDir))
		}
	case V2:
		roots = []string{filepath.Join(l.mount, tollDir)}
	}
	var names []string
	for _, r := range roots {
		entries, err := os.ReadDir(r)
		if err != nil {
			continue // no toll directory in this hierarchy
		}
		for _, e := range entries {
			if e.IsDir() && !slices.Contains(names, e.Name()) && !inUse(e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	var errs []error
	var removed []string
	for _, n := range names {
		var dirs []string
		for _, r := range roots {
			dirs = append(dirs, filepath.Join(r, n))
		}
		if err := killCgroups(l.version, dirs, killTimeout); err != nil {
			errs = append(errs, err)
			continue
		}
		ok := true
		for _, d := range dirs {
			if err := removeCgroupDir(d, removeTimeout); err != nil {
				errs = append(errs, err)
				ok = false
			}
		}
		if ok {
			removed = append(removed, n)
		}
	}
	for _, r := range roots {
		_ = unix.Rmdir(r) // only succeeds when empty
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("cgroup: remove stale trees: %w", errors.Join(errs...))
	}
	return removed, nil
}
