package jvm

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// maxFileSize bounds what Open maps; HotSpot's default is 32 KiB
// (-XX:PerfDataMemorySize).
const maxFileSize = 64 << 20

// Open maps the hsperfdata file at path read-only and indexes its
// entries. The mapping follows the JVM's updates, so one Reader serves
// every sample; Close unmaps it. An error wrapping ErrNotReady means the
// JVM is still setting the file up: retry shortly.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("jvm: open hsperfdata: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("jvm: open hsperfdata: %w", err)
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("jvm: %s: not a regular file", path)
	}
	if size < prologueSize {
		return nil, fmt.Errorf("jvm: %s: %d bytes, shorter than the %d-byte prologue: %w", path, size, prologueSize, ErrNotReady)
	}
	if size > maxFileSize {
		return nil, fmt.Errorf("jvm: %s: %d bytes, too large for an hsperfdata file", path, size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("jvm: mmap %s: %w", path, err)
	}
	r, err := parse(path, b)
	if err != nil {
		_ = unix.Munmap(b)
		return nil, err
	}
	r.mapped = true
	return r, nil
}

// Close releases the Reader's mapping. Afterwards Counters fails and Long
// and String report nothing. Closing twice is harmless.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, mapped := r.b, r.mapped
	r.b, r.mapped = nil, false
	if b == nil || !mapped {
		return nil
	}
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("jvm: munmap %s: %w", r.name, err)
	}
	return nil
}
