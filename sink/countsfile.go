package sink

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// countsSize is the bytes a CountsFile maps: the counters, rounded up to
// a cache line.
const countsSize = 64

// A CountsFile holds a sink's counts in a file mapped into memory, shared
// by every process that maps it: a sink run in a process of its own
// (toll's _sink, at idle priority beside the load generator) counts into
// it, and toll reads the counts with a few atomic loads, without asking
// that process and without waiting for it to be scheduled.
type CountsFile struct {
	mem []byte
	c   *counters
}

// CreateCountsFile creates (or truncates) the file at path, sizes it for
// the counts, all zero, and maps it.
func CreateCountsFile(path string) (*CountsFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create sink counts file: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(countsSize); err != nil {
		return nil, fmt.Errorf("size sink counts file %s: %w", path, err)
	}
	return mapCounts(f)
}

// OpenCountsFile maps the counts file at path, made by CreateCountsFile.
func OpenCountsFile(path string) (*CountsFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open sink counts file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open sink counts file: %w", err)
	}
	if fi.Size() != countsSize {
		return nil, fmt.Errorf("open sink counts file %s: %d bytes, want %d", path, fi.Size(), countsSize)
	}
	return mapCounts(f)
}

// mapCounts maps f, countsSize bytes long, shared.
func mapCounts(f *os.File) (*CountsFile, error) {
	mem, err := unix.Mmap(int(f.Fd()), 0, countsSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map sink counts file %s: %w", f.Name(), err)
	}
	// A mapping starts on a page boundary, so every counter is aligned
	// for 64-bit atomics.
	return &CountsFile{mem: mem, c: (*counters)(unsafe.Pointer(&mem[0]))}, nil
}

// Counts returns the counts in the file: what the sink counting into it
// has received so far.
func (f *CountsFile) Counts() Counts { return f.c.counts() }

// Close unmaps the file. The CountsFile, and a sink counting into it,
// must not be used after.
func (f *CountsFile) Close() error {
	if f.mem == nil {
		return nil
	}
	err := unix.Munmap(f.mem)
	f.mem, f.c = nil, nil
	if err != nil {
		return fmt.Errorf("unmap sink counts file: %w", err)
	}
	return nil
}

// The counters must fit the mapping.
var _ = [countsSize - unsafe.Sizeof(counters{})]byte{}
