package load

import (
	"io"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a non-blocking socket with raw system calls,
// waiting for readiness through Go's poller (and so honouring the
// connection's deadlines).
//
// net.Conn's Read and Write make their system calls as blocking ones: the
// runtime hands the goroutine's processor to another thread if a call lasts
// longer than its monitor's tick (20 µs). On a virtual machine a loopback
// write that wakes an idle server costs about that much (the wake-up is an
// inter-processor interrupt, trapped by the hypervisor), so each request
// would shuffle threads several times. A call on a non-blocking socket
// never blocks, so rawIO makes it without telling the scheduler.
type rawIO struct {
	rc syscall.RawConn

	// The current call's buffer and outcome, set around rc.Read/rc.Write;
	// readFn and writeFn are bound once so that a call does not allocate.
	p       []byte
	n       int
	errno   syscall.Errno
	readFn  func(uintptr) bool
	writeFn func(uintptr) bool
	sendFn  func(uintptr) bool
	sent    bool // sendFn has written
}

func newRawIO(rc syscall.RawConn) *rawIO {
	r := &rawIO{rc: rc}
	r.readFn = r.read
	r.writeFn = r.write
	r.sendFn = r.send
	return r
}

// send is the callback of Send: its first call writes, its second (once the
// poller says the socket is readable) returns at once.
func (r *rawIO) send(fd uintptr) bool {
	if r.sent {
		return true
	}
	r.sent = true
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
	r.n, r.errno = int(n), errno
	if errno != 0 || r.n < len(r.p) {
		return true // let Send finish the write the usual way
	}
	return false // wait until the response starts to arrive
}

// Send writes a request and waits until its response starts to arrive,
// without reading it. Writing from inside the poller's read wait saves the
// read that would otherwise fail with EAGAIN after every write: a read wait
// forgets readiness the poller saw before it began, so a response can only
// be noticed if the request is written after the wait began.
func (r *rawIO) Send(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	r.p, r.n, r.errno, r.sent = p, 0, 0, false
	err := r.rc.Read(r.sendFn)
	r.p = nil
	switch {
	case err != nil:
		return err
	case r.errno == syscall.EAGAIN:
		r.n, r.errno = 0, 0
	case r.errno != 0:
		return &syscallError{"write", r.errno}
	}
	if r.n < len(p) {
		_, err := r.Write(p[r.n:])
		return err
	}
	return nil
}

func (r *rawIO) read(fd uintptr) bool {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
	if errno == syscall.EAGAIN {
		return false
	}
	r.n, r.errno = int(n), errno
	return true
}

func (r *rawIO) write(fd uintptr) bool {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
	if errno == syscall.EAGAIN {
		return false
	}
	r.n, r.errno = int(n), errno
	return true
}

// Read implements io.Reader.
func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.readFn)
	r.p = nil
	switch {
	case err != nil:
		return 0, err
	case r.errno != 0:
		return 0, &syscallError{"read", r.errno}
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}

// Write implements io.Writer: it writes all of p.
func (r *rawIO) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		r.p, r.n, r.errno = p[done:], 0, 0
		err := r.rc.Write(r.writeFn)
		r.p = nil
		switch {
		case err != nil:
			return done, err
		case r.errno != 0:
			return done, &syscallError{"write", r.errno}
		}
		done += r.n
	}
	return done, nil
}

// syscallError is a failed read or write; it unwraps to the errno, as
// os.SyscallError does, without os's allocation on the success path.
type syscallError struct {
	op    string
	errno syscall.Errno
}

func (e *syscallError) Error() string { return e.op + ": " + e.errno.Error() }
func (e *syscallError) Unwrap() error { return e.errno }
