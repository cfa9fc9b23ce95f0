package load

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Go's timers wake a goroutine late by up to a millisecond when the process
// is otherwise idle: the runtime's network poller rounds sub-millisecond
// waits up to 1 ms. At thousands of requests per second that lateness is in
// every latency measured from the intended send time. A sleeper therefore
// waits the last stretch (below coarseSlack) on a timerfd, which the
// poller wakes on as soon as the kernel timer fires: tens of microseconds,
// the machine's own timer latency, instead of a millisecond.
const coarseSlack = 2 * time.Millisecond

// maxEarly bounds how early a sleeper arms its timer (see sleeper.early),
// and the lateness of one wake-up that its estimate takes in.
const maxEarly = 200 * time.Microsecond

// sleeper waits until a point in time, precisely. It is owned by one
// goroutine.
type sleeper struct {
	fd   int
	file *os.File
	raw  syscall.RawConn
	// timer is for the coarse part of long waits, which must be
	// interruptible.
	timer *time.Timer
	// end is the end of the wait in progress, for dueFn, made once so
	// that a wait does not allocate a closure.
	end   time.Time
	dueFn func(fd uintptr) bool
	// early is how long before the time asked the timer is armed: a moving
	// average of how late the machine has woken the process (about 50 µs
	// on a VM), so that wake-ups land on time on average rather than all
	// late by that much. A wait may therefore end up to early before its
	// time; callers that time from it take that into account.
	early time.Duration
}

// newSleeper creates a sleeper, with its timerfd.
func newSleeper() (*sleeper, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("load: create timerfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load: timerfd: %w", err)
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	s := &sleeper{fd: fd, file: f, raw: raw, timer: t}
	s.dueFn = s.due
	return s, nil
}

// close releases the timerfd.
func (s *sleeper) close() {
	s.timer.Stop()
	s.file.Close()
}

// errInterrupted reports a wait cut short by its done channel.
var errInterrupted = errors.New("load: wait interrupted")

// until waits until about when the monotonic clock reads at (a time.Time
// with a monotonic reading): it returns up to maxEarly before at (see
// early), and otherwise as soon as the machine wakes it after. If done is
// closed first it returns errInterrupted; only the coarse part of a long
// wait can be interrupted, the last coarseSlack is waited out. It reports
// whether it waited at all (at was still to come).
func (s *sleeper) until(at time.Time, done <-chan struct{}) (waited bool, err error) {
	wait := time.Until(at)
	if wait <= s.early {
		return false, nil
	}
	if wait > coarseSlack {
		s.timer.Reset(wait - coarseSlack)
		select {
		case <-s.timer.C:
		case <-done:
			s.timer.Stop()
			return true, errInterrupted
		}
		if wait = time.Until(at); wait <= s.early {
			return true, nil
		}
	}
	return true, s.fine(wait - s.early)
}

// fine waits d on the timerfd.
func (s *sleeper) fine(d time.Duration) error {
	// end is taken before the timer is armed, so the timer fires at or
	// after it.
	end := time.Now().Add(d)
	// Raw system calls, as in rawIO: these never block, and a call the
	// runtime is told of wakes its monitor thread when the process was idle.
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if _, _, errno := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(s.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("load: arm timerfd: %w", errno)
	}
	// The poller wakes the goroutine on each expiry: it watches the
	// timerfd edge-triggered, and the kernel signals every expiry whether
	// or not the last was read. RawConn.Read clears the readiness the
	// poller recorded before it calls f, then f says whether the wait is
	// over by the clock alone, and the poller is waited on while it is
	// not. So the timerfd is never read: one system call fewer per
	// request sent (the count of expiries it keeps is never needed).
	s.end = end
	if err := s.raw.Read(s.dueFn); err != nil {
		return fmt.Errorf("load: wait on timerfd: %w", err)
	}
	late := min(time.Since(end), maxEarly)
	s.early += (late - s.early) / 16
	return nil
}

// due is the RawConn.Read callback of fine: it reports whether the wait
// is over.
func (s *sleeper) due(uintptr) bool { return !time.Now().Before(s.end) }
