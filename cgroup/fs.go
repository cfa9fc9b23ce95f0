package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// procsFile lists the processes of a cgroup (both versions).
	procsFile = "cgroup.procs"
	// statBufSize bounds the cgroup files Stat reads (cpu.stat is < 300 B).
	statBufSize = 1024
	// retryInterval is how often rmdir and kill loops poll.
	retryInterval = 10 * time.Millisecond
)

// readInto reads the whole file at path into buf and returns the filled part.
// It allocates nothing but the C string for the path, which is what makes
// Stat cheap.
func readInto(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
	return nil, fmt.Errorf("read %s: larger than %d bytes", path, len(buf))
}

// writeString writes s to the cgroup file at path in a single write(2), as
// cgroup files expect.
func writeString(path, s string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer unix.Close(fd)
	for {
		_, err = unix.Write(fd, []byte(s))
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// parsePids parses the contents of a cgroup.procs file.
func parsePids(data []byte, into []int) ([]int, error) {
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		pid, err := strconv.Atoi(string(line))
		if err != nil {
			return into, fmt.Errorf("bad pid %q", line)
		}
		into = append(into, pid)
	}
	return into, nil
}

// collectPids returns the sorted, distinct pids in the cgroups at dirs and
// every cgroup below them. Directories that don't exist are skipped.
func collectPids(dirs []string) ([]int, error) {
	var pids []int
	for _, d := range dirs {
		var err error
		if pids, err = appendPids(d, pids); err != nil {
			return nil, err
		}
	}
	slices.Sort(pids)
	return slices.Compact(pids), nil
}

func appendPids(dir string, pids []int) ([]int, error) {
	path := filepath.Join(dir, procsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return pids, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if pids, err = parsePids(data, pids); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return pids, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			if pids, err = appendPids(filepath.Join(dir, e.Name()), pids); err != nil {
				return nil, err
			}
		}
	}
	return pids, nil
}

// removeCgroupDir removes the cgroup at dir and every cgroup below it,
// children first. rmdir of a cgroup fails with EBUSY while it still has
// processes, which may take a moment to exit after a kill, so it retries
// until timeout. A directory that does not exist is not an error.
func removeCgroupDir(dir string, timeout time.Duration) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			if err := removeCgroupDir(filepath.Join(dir, e.Name()), timeout); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("rmdir %s: %w", dir, err)
		}
		time.Sleep(retryInterval)
	}
}

// exists says whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
