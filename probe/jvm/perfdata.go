package jvm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ErrNotReady reports an hsperfdata file that its JVM has not finished
// setting up (too short, no magic yet, or not yet marked accessible).
// Retry after a short wait, as jstat does.
var ErrNotReady = errors.New("hsperfdata not ready")

const (
	magic           = 0xcafec0c0
	prologueSize    = 32
	entryHeaderSize = 20

	// Offsets in the prologue.
	offByteOrder   = 4
	offMajor       = 5
	offMinor       = 6
	offAccessible  = 7
	offUsed        = 8
	offOverflow    = 12
	offModTime     = 16
	offEntryOffset = 24
	offNumEntries  = 28

	typeLong = 'J'
	typeByte = 'B'
)

var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// entry is one indexed hsperfdata entry.
type entry struct {
	name string
	typ  byte // JNI type: 'J' long, 'B' byte
	vlen int  // vector length in elements; 0 for a scalar
	data int  // offset of the data from the start of the buffer
}

// Reader reads the counters of one hsperfdata buffer: a file mapped by
// Open, or a byte slice given to Parse. Its methods are safe for
// concurrent use. Values are read from the buffer at each call, so a
// Reader over a live JVM's mapped file follows the JVM.
type Reader struct {
	name string // the file, for errors

	mu      sync.Mutex
	b       []byte
	mapped  bool
	order   binary.ByteOrder
	native  bool // order is the machine's, so aligned longs can be loaded atomically
	entries []entry
	byName  map[string]int
	next    int // offset of the next entry to index
	plan    *plan
	planned int // len(entries) when plan was built
}

// Parse indexes the hsperfdata buffer b (the contents of an hsperfdata
// file) and returns a Reader over it. b is not copied: a Reader reads the
// values from b at every call, so b may be memory that the JVM updates.
func Parse(b []byte) (*Reader, error) {
	return parse("hsperfdata buffer", b)
}

func parse(name string, b []byte) (*Reader, error) {
	r := &Reader{name: name, b: b, byName: make(map[string]int)}
	if len(b) < prologueSize {
		return nil, fmt.Errorf("jvm: %s: %d bytes, shorter than the %d-byte prologue: %w", name, len(b), prologueSize, ErrNotReady)
	}
	switch m := binary.BigEndian.Uint32(b); {
	case m == 0:
		return nil, fmt.Errorf("jvm: %s: no magic number yet: %w", name, ErrNotReady)
	case m != magic:
		return nil, fmt.Errorf("jvm: %s: magic 0x%08x, want 0x%08x: not an hsperfdata file", name, m, uint32(magic))
	}
	switch b[offByteOrder] {
	case 0:
		r.order, r.native = binary.BigEndian, !nativeLittle
	case 1:
		r.order, r.native = binary.LittleEndian, nativeLittle
	default:
		return nil, fmt.Errorf("jvm: %s: byte order %d, want 0 (big) or 1 (little)", name, b[offByteOrder])
	}
	if major := b[offMajor]; major != 2 {
		return nil, fmt.Errorf("jvm: %s: hsperfdata version %d.%d, only 2.x is supported", name, major, b[offMinor])
	}
	if b[offAccessible] == 0 {
		return nil, fmt.Errorf("jvm: %s: not yet accessible: %w", name, ErrNotReady)
	}
	r.next = int(int32(r.order.Uint32(b[offEntryOffset:])))
	if r.next < prologueSize || r.next > len(b) {
		return nil, fmt.Errorf("jvm: %s: entry offset %d outside the %d-byte buffer", name, r.next, len(b))
	}
	if err := r.index(); err != nil {
		return nil, err
	}
	return r, nil
}

// index indexes the entries added since the last call. The JVM counts an
// entry before writing it, so an entry still zero at the end is left for a
// later call.
func (r *Reader) index() error {
	b := r.b
	if b == nil {
		return fmt.Errorf("jvm: %s: %w", r.name, fs.ErrClosed)
	}
	n := int(r.load32(offNumEntries))
	if n < 0 || n > (len(b)-prologueSize)/entryHeaderSize {
		return fmt.Errorf("jvm: %s: %d entries cannot fit in %d bytes", r.name, n, len(b))
	}
	for len(r.entries) < n {
		off := r.next
		if off+entryHeaderSize > len(b) {
			return fmt.Errorf("jvm: %s: entry %d at offset %d runs past the %d-byte buffer", r.name, len(r.entries), off, len(b))
		}
		h := b[off : off+entryHeaderSize]
		length := int(int32(r.order.Uint32(h[0:])))
		if length == 0 {
			break // allocated but not yet written
		}
		nameOff := int(int32(r.order.Uint32(h[4:])))
		vlen := int(int32(r.order.Uint32(h[8:])))
		typ := h[12]
		dataOff := int(int32(r.order.Uint32(h[16:])))
		bad := func(what string, args ...any) error {
			return fmt.Errorf("jvm: %s: entry %d at offset %d: %s", r.name, len(r.entries), off, fmt.Sprintf(what, args...))
		}
		if length < entryHeaderSize || length > len(b)-off {
			return bad("length %d outside [%d, %d]", length, entryHeaderSize, len(b)-off)
		}
		if nameOff < entryHeaderSize || nameOff >= length {
			return bad("name offset %d outside the %d-byte entry", nameOff, length)
		}
		e := b[off : off+length]
		nul := slices.Index(e[nameOff:], 0)
		if nul < 0 {
			return bad("name not NUL-terminated")
		}
		size := 0
		switch typ {
		case typeLong:
			size = 8
		case typeByte:
			size = 1
		}
		if vlen < 0 || vlen > length {
			return bad("vector length %d in a %d-byte entry", vlen, length)
		}
		if vlen > 0 {
			size *= vlen
		}
		if dataOff < entryHeaderSize || dataOff > length-size {
			return bad("%d bytes of data at offset %d outside the %d-byte entry", size, dataOff, length)
		}
		name := string(e[nameOff : nameOff+nul])
		if _, dup := r.byName[name]; !dup {
			r.byName[name] = len(r.entries)
		}
		r.entries = append(r.entries, entry{name: name, typ: typ, vlen: vlen, data: off + dataOff})
		r.next = off + length
	}
	return nil
}

// refresh indexes new entries if the JVM has added some. It is one load
// when it has not. Call with r.mu held.
func (r *Reader) refresh() error {
	if r.b == nil {
		return fmt.Errorf("jvm: %s: %w", r.name, fs.ErrClosed)
	}
	if int(r.load32(offNumEntries)) == len(r.entries) {
		return nil
	}
	return r.index()
}

// load32 reads the int32 at off, atomically when the JVM could be writing
// it and the machine allows.
func (r *Reader) load32(off int) int32 {
	if r.native {
		p := unsafe.Pointer(&r.b[off])
		if uintptr(p)%4 == 0 {
			return atomic.LoadInt32((*int32)(p))
		}
	}
	return int32(r.order.Uint32(r.b[off:]))
}

// load64 reads the int64 at off, atomically (untorn) when aligned in
// native order, which is how the JVM lays out its longs.
func (r *Reader) load64(off int) int64 {
	if r.native {
		p := unsafe.Pointer(&r.b[off])
		if uintptr(p)%8 == 0 {
			return atomic.LoadInt64((*int64)(p))
		}
	}
	return int64(r.order.Uint64(r.b[off:]))
}

// lookup returns the entry called name. Call with r.mu held.
func (r *Reader) lookup(name string) (entry, bool) {
	if r.refresh() != nil {
		return entry{}, false
	}
	i, ok := r.byName[name]
	if !ok {
		return entry{}, false
	}
	return r.entries[i], true
}

// Names returns the names of the entries, sorted.
func (r *Reader) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refresh() != nil && r.b == nil {
		return nil
	}
	names := make([]string, len(r.entries))
	for i, e := range r.entries {
		names[i] = e.name
	}
	slices.Sort(names)
	return names
}

// Long returns the value of the long (scalar 'J') entry called name, such
// as "sun.gc.metaspace.used", and whether there is one. Figures in ticks
// are raw; sun.os.hrt.frequency gives ticks per second.
func (r *Reader) Long(name string) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.lookup(name)
	if !ok || e.typ != typeLong || e.vlen != 0 {
		return 0, false
	}
	return r.load64(e.data), true
}

// String returns the value of the string entry (a 'B' vector) called
// name, such as "sun.rt.javaCommand", up to its first NUL, and whether
// there is one. A variable string (e.g. sun.gc.cause) read while the JVM
// writes it may come out mixed.
func (r *Reader) String(name string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.lookup(name)
	if !ok {
		return "", false
	}
	return r.str(e)
}

func (r *Reader) str(e entry) (string, bool) {
	if e.typ != typeByte || e.vlen == 0 {
		return "", false
	}
	v := r.b[e.data : e.data+e.vlen]
	if i := slices.Index(v, 0); i >= 0 {
		v = v[:i]
	}
	return string(v), true
}

// prologue is the header of an hsperfdata buffer, for tests and
// diagnostics.
type prologue struct {
	major, minor   byte
	used, overflow int32
	modTime        int64
	entries        int32
}

func (r *Reader) prologue() prologue {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.b == nil {
		return prologue{}
	}
	return prologue{
		major:    r.b[offMajor],
		minor:    r.b[offMinor],
		used:     int32(r.order.Uint32(r.b[offUsed:])),
		overflow: int32(r.order.Uint32(r.b[offOverflow:])),
		modTime:  int64(r.order.Uint64(r.b[offModTime:])),
		entries:  r.load32(offNumEntries),
	}
}
