package app

import (
	"context"
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
	// ExtraCPU is CPU time burnt on top of Work, measured on a CPU time
	// clock (so it holds whatever the machine's load): the process's when
	// the Go runtime runs one goroutine at a time (GOMAXPROCS 1, as on a
	// service pinned to one CPU), so that the runtime's own threads, which
	// run beside the burn and are charged to the service too, count in it;
	// the calling thread's otherwise, since other goroutines may then run
	// at the same time.
	ExtraCPU time.Duration
	// ExtraDelay is wall time slept, using no CPU.
	ExtraDelay time.Duration
	// ExtraAlloc is a number of bytes allocated on the heap and touched.
	ExtraAlloc ByteSize
	// BackgroundCPU is CPU time burnt per second of wall time by a
	// goroutine of its own, whether the service is loaded or not, in
	// slices every backgroundTick: the background work an agent does on
	// timers (an exporter, a profiler, a metrics reader), which a service
	// left idle beside another's trial keeps doing.
	BackgroundCPU time.Duration
}

// backgroundTick is how often BackgroundCPU's goroutine wakes to burn its
// slice.
const backgroundTick = 100 * time.Millisecond

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
	if b.BackgroundCPU < 0 || b.BackgroundCPU > time.Second/2 {
		errs = append(errs, fmt.Errorf("background CPU %v per second is not between 0 and 500ms", b.BackgroundCPU))
	}
	if b.ExtraCPU > 0 || b.BackgroundCPU > 0 {
		if _, err := burnClock()(); err != nil {
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

// Background burns BackgroundCPU per second until ctx is done; it returns
// at once when there is none.
func (b Burn) Background(ctx context.Context) {
	if b.BackgroundCPU <= 0 {
		return
	}
	slice := b.BackgroundCPU * backgroundTick / time.Second
	tick := time.NewTicker(backgroundTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			spinCPU(slice)
		}
	}
}

// logLoop returns Σ ln(i) for i in 1..n.
func logLoop(n int) float64 {
	var s float64
	for i := 1; i <= n; i++ {
		s += math.Log(float64(i))
	}
	return s
}

// spinCPU burns d of CPU time on the clock burnClock picks. The goroutine
// is locked to its thread meanwhile, so that the thread clock, when used,
// reads one thread. If no clock can be read (Validate reports it
// beforehand) it falls back to wall time.
func spinCPU(d time.Duration) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := burnClock()
	start, err := clock()
	if err != nil {
		clock = wallClock()
		start, _ = clock()
	}
	var r float64
	for {
		r += logLoop(spinChunk)
		now, _ := clock()
		if now-start >= d {
			return r
		}
	}
}

// burnClock returns the CPU clock ExtraCPU is measured on: the process's
// with one P, the thread's with more.
//
// With one P no other goroutine of the service runs during the burn; the
// runtime's own threads (its monitor above all) still do, and on a VM,
// where waking a thread is dear, they were measured adding a tenth or more
// to what the burn cost the service's cgroup. The process clock counts them.
func burnClock() func() (time.Duration, error) {
	if runtime.GOMAXPROCS(0) == 1 {
		return processCPU
	}
	return threadCPU
}

// processCPU returns the CPU time all of the process's threads have used,
// with a raw system call (see threadCPU).
func processCPU() (time.Duration, error) {
	return clockCPU(unix.CLOCK_PROCESS_CPUTIME_ID, "process")
}

// threadCPU returns the CPU time the calling thread has used.
//
// It makes a raw system call, which does not tell the Go scheduler it is in
// one: unix.ClockGettime does, and the burn reads the clock every few
// microseconds, each time offering the scheduler's monitor the thread's P
// to hand to another thread. The read never blocks, so a raw call is safe.
func threadCPU() (time.Duration, error) {
	return clockCPU(unix.CLOCK_THREAD_CPUTIME_ID, "thread")
}

// clockCPU reads a CPU time clock.
func clockCPU(id uintptr, name string) (time.Duration, error) {
	var ts unix.Timespec
	_, _, errno := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, fmt.Errorf("read %s CPU clock: %w", name, errno)
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
