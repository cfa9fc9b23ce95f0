package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// lockFile is the file whose lock marks a results directory as owned by a
// run; it holds a line naming the run that owns it.
const lockFile = ".lock"

// ErrInUse is returned by Lock when another process holds the directory.
var ErrInUse = errors.New("results directory in use")

// Lock makes the calling process the owner of the directory for as long
// as it lives or until release is called: a second run writing trials into
// the same directory (toll run --resume of a run still going) would have
// two writers of the same files. owner, written into the lock file, names
// the owner in the error of whoever tries next. The lock is the kernel's
// (flock), so it ends with the process however it ends, SIGKILL included,
// and a directory left by a killed run can be resumed at once.
//
// The lock file is never followed through a symbolic link, and must be a
// regular file: toll may run as root, and a link planted in the directory
// would otherwise have it truncate and write whatever file the link names.
func (d *Dir) Lock(owner string) (release func(), err error) {
	path := filepath.Join(d.Path, lockFile)
	// O_NONBLOCK: opening a FIFO planted as the lock file must not wait
	// for a writer; it is refused below as not a regular file.
	f, err := d.openFile(lockFile, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o644)
	if err != nil {
		if st, lerr := d.lstat(lockFile); errors.Is(err, unix.ELOOP) || lerr == nil && st.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("lock %s: %s is a symbolic link; toll writes its lock file only in the directory itself: remove the link", d.Path, path)
		}
		return nil, fmt.Errorf("lock %s: %w", d.Path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", d.Path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lock %s: %s is not a regular file (%s); remove it", d.Path, path, st.Mode().Type())
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			held := make([]byte, 256)
			n, _ := f.ReadAt(held, 0)
			f.Close()
			who := strings.TrimSpace(string(held[:n]))
			if who == "" {
				who = "another process"
			}
			return nil, fmt.Errorf("%w: %s is being written by %s: wait for it to end, or stop it first", ErrInUse, d.Path, who)
		}
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", d.Path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(owner+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
