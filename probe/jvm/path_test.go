package jvm

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fakeHost points Path at a temporary /proc and /tmp in which process pid
// has effective user uid, and returns the fake /tmp.
func fakeHost(t *testing.T, pid, uid int) string {
	t.Helper()
	proc, tmp := t.TempDir(), t.TempDir()
	oldProc, oldTmp := procDir, tmpDir
	procDir, tmpDir = proc, tmp
	t.Cleanup(func() { procDir, tmpDir = oldProc, oldTmp })
	dir := filepath.Join(proc, strconv.Itoa(pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	status := "Name:\tjava\nUid:\t1\t" + strconv.Itoa(uid) + "\t1\t1\nGid:\t0\t0\t0\t0\n"
	if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestPath(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skipf("current user: %v", err)
	}
	uid, _ := strconv.Atoi(me.Uid)
	const pid = 4242

	t.Run("user's directory", func(t *testing.T) {
		tmp := fakeHost(t, pid, uid)
		touch(t, filepath.Join(tmp, "hsperfdata_someone", "4242"))
		want := filepath.Join(tmp, "hsperfdata_"+me.Username, "4242")
		touch(t, want)
		if got, err := Path(pid); got != want || err != nil {
			t.Errorf("Path = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("another directory", func(t *testing.T) {
		tmp := fakeHost(t, pid, uid)
		want := filepath.Join(tmp, "hsperfdata_someone", "4242")
		touch(t, want)
		touch(t, filepath.Join(tmp, "hsperfdata_someone", "4243"))
		if got, err := Path(pid); got != want || err != nil {
			t.Errorf("Path = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("owner preferred", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to chown")
		}
		const other = 54321 // a uid with no user
		if _, err := user.LookupId(strconv.Itoa(other)); err == nil {
			t.Skipf("uid %d has a user", other)
		}
		tmp := fakeHost(t, pid, other)
		touch(t, filepath.Join(tmp, "hsperfdata_a", "4242"))
		want := filepath.Join(tmp, "hsperfdata_b", "4242")
		touch(t, want)
		if err := os.Chown(want, other, other); err != nil {
			t.Fatal(err)
		}
		if got, err := Path(pid); got != want || err != nil {
			t.Errorf("Path = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("no file", func(t *testing.T) {
		tmp := fakeHost(t, pid, uid)
		if err := os.Mkdir(filepath.Join(tmp, "hsperfdata_x"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(tmp, "hsperfdata_x", "4242"), 0o755); err != nil {
			t.Fatal(err) // a directory is not the file
		}
		_, err := Path(pid)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(tmp, "hsperfdata_"+me.Username, "4242")) {
			t.Errorf("Path: %v", err)
		}
	})
	t.Run("no process", func(t *testing.T) {
		fakeHost(t, pid, uid)
		_, err := Path(pid + 1)
		if !errors.Is(err, syscall.ESRCH) || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Path: %v", err)
		}
	})
	t.Run("bad status", func(t *testing.T) {
		fakeHost(t, pid, uid)
		if err := os.WriteFile(filepath.Join(procDir, "4242", "status"), []byte("Name:\tx\nUid:\tz\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Path(pid); err == nil || !strings.Contains(err.Error(), "Uid") {
			t.Errorf("Path: %v", err)
		}
	})
	t.Run("not a JVM", func(t *testing.T) {
		_, err := Path(os.Getpid())
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Path of the test process: %v", err)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		if _, err := Path(0); err == nil {
			t.Error("Path(0) succeeded")
		}
	})
}
