package app

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spinChunk is how many math.Log iterations ExtraCPU burns between two reads
// of the thread CPU clock: a few microseconds, so the burn overshoots its
// target by little while the clock reads stay a small share of it.
const spinChunk = 256

// pageSize is the stride at which ExtraAlloc touches its buffer: one write
// per 4 KiB reaches every page whatever the kernel's page size.
const pageSize = 4096

// Burn is what one request costs a reference service.
type Burn struct {
	// Work is the number of math.Log iterations, as in the SkyWalking Go
	// benchmark's services.
	Work int
	// ExtraCPU is CPU time burnt on top of Work, measured on the calling
	// thread's CPU clock (so it holds whatever the machine's load).
	ExtraCPU time.Duration
	// ExtraDelay is wall time slept, using no CPU.
	ExtraDelay time.Duration
	// ExtraAlloc is a number of bytes allocated on the heap and touched.
	ExtraAlloc ByteSize
}

// Validate reports a negative knob, or a thread CPU clock that cannot be
// read when ExtraCPU is asked for.
func (b Burn) Validate() error {
	var errs []error
	if b.Work < 0 {
		errs = append(errs, fmt.Errorf("work %d is negative", b.Work))
	}
	if b.ExtraCPU < 0 {
		errs = append(errs, fmt.Errorf("extra CPU %v is negative", b.ExtraCPU))
	}
	if b.ExtraDelay < 0 {
		errs = append(errs, fmt.Errorf("extra delay %v is negative", b.ExtraDelay))
	}
	if b.ExtraAlloc < 0 {
		errs = append(errs, fmt.Errorf("extra alloc %d is negative", b.ExtraAlloc))
	}
	if b.ExtraCPU > 0 {
		if _, err := threadCPU(); err != nil {
			errs = append(errs, fmt.Errorf("extra CPU: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Do spends b: Work iterations, then ExtraCPU, ExtraAlloc and ExtraDelay.
// It returns a value computed from the work and the allocation; callers
// should use it (the services put it in their answer) so that the compiler
// cannot drop any of it.
func (b Burn) Do() float64 {
	r := logLoop(b.Work)
	if b.ExtraCPU > 0 {
		r += spinCPU(b.ExtraCPU)
	}
	if b.ExtraAlloc > 0 {
		r += float64(allocTouch(int(b.ExtraAlloc)))
	}
	if b.ExtraDelay > 0 {
		time.Sleep(b.ExtraDelay)
	}
	return r
}

// logLoop returns Σ ln(i) for i in 1..n.
func logLoop(n int) float64 {
	var s float64
	for i := 1; i <= n; i++ {
		s += math.Log(float64(i))
	}
	return s
}

// spinCPU burns d of CPU time on the current OS thread, read from
// CLOCK_THREAD_CPUTIME_ID. The goroutine is locked to its thread meanwhile,
// so time the thread spends descheduled is not counted. If the clock cannot
// be read (Validate reports it beforehand) it falls back to wall time.
func spinCPU(d time.Duration) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := threadCPU
	if _, err := threadCPU(); err != nil {
		clock = wallClock()
	}
	start, _ := clock()
	var r float64
	for {
		r += logLoop(spinChunk)
		now, _ := clock()
		if now-start >= d {
			return r
		}
	}
}

// threadCPU returns the CPU time the calling thread has used.
//
// It makes a raw system call, which does not tell the Go scheduler it is in
// one: unix.ClockGettime does, and the burn reads the clock every few
// microseconds, each time offering the scheduler's monitor the thread's P
// to hand to another thread. The read never blocks, so a raw call is safe.
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	_, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, fmt.Errorf("read thread CPU clock: %w", errno)
	}
	return time.Duration(ts.Nano()), nil
}

// wallClock returns a clock of the wall time elapsed since the call.
func wallClock() func() (time.Duration, error) {
	t0 := time.Now()
	return func() (time.Duration, error) { return time.Since(t0), nil }
}

// allocTouch allocates n bytes on the heap, writes one byte per page so
// the kernel backs every page, and returns a checksum of what it wrote.
func allocTouch(n int) byte {
	buf := make([]byte, n)
	for i := 0; i < n; i += pageSize {
		buf[i] = byte(i/pageSize) | 1
	}
	buf[n-1] |= 1
	var sum byte
	for i := 0; i < n; i += pageSize {
		sum ^= buf[i]
	}
	return sum ^ buf[n-1]
}
