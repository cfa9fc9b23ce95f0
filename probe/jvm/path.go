package jvm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// tmpDir is where HotSpot on Linux puts hsperfdata_<user>: always /tmp,
// whatever java.io.tmpdir or TMPDIR say. tmpDir and procDir are variables
// for tests.
var (
	tmpDir  = "/tmp"
	procDir = "/proc"
)

// Path returns the hsperfdata file of the JVM with process id pid:
// /tmp/hsperfdata_<user>/<pid>, where user is the name of the process's
// effective user, or failing that the only /tmp/hsperfdata_*/<pid>. The
// error wraps os.ErrNotExist when the JVM has no file (yet: it creates it
// early in start-up; or at all: -XX:-UsePerfData, -XX:+PerfDisableSharedMem),
// and wraps syscall.ESRCH when there is no process pid. A JVM in another
// mount namespace (a container) is out of scope.
func Path(pid int) (string, error) {
	if pid <= 0 {
		return "", fmt.Errorf("jvm: hsperfdata of pid %d: invalid pid", pid)
	}
	uid, err := effectiveUID(pid)
	if err != nil {
		return "", fmt.Errorf("jvm: hsperfdata of pid %d: %w", pid, err)
	}
	base := strconv.Itoa(pid)
	var looked []string
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		p := filepath.Join(tmpDir, "hsperfdata_"+u.Username, base)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
		looked = append(looked, p)
	}
	// The user may be unknown here (no entry in /etc/passwd), or the JVM
	// may have resolved its name differently: look in every user's
	// directory, preferring a file owned by the process's user.
	glob := filepath.Join(tmpDir, "hsperfdata_*", base)
	matches, _ := filepath.Glob(glob)
	var found string
	for _, p := range matches {
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			return p, nil
		}
		if found == "" {
			found = p
		}
	}
	if found != "" {
		return found, nil
	}
	looked = append(looked, glob)
	return "", fmt.Errorf("jvm: hsperfdata of pid %d: no %s (not started yet, or run with -XX:-UsePerfData or -XX:+PerfDisableSharedMem?): %w",
		pid, strings.Join(looked, " or "), os.ErrNotExist)
}

// effectiveUID returns the effective user id of process pid, from
// /proc/<pid>/status.
func effectiveUID(pid int) (int, error) {
	p := filepath.Join(procDir, strconv.Itoa(pid), "status")
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("no such process: %w", syscall.ESRCH)
	}
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("Uid:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest) // real, effective, saved, filesystem
		if len(f) < 2 {
			break
		}
		uid, err := strconv.Atoi(string(f[1]))
		if err != nil {
			break
		}
		return uid, nil
	}
	return 0, fmt.Errorf("%s: no valid Uid line", p)
}
