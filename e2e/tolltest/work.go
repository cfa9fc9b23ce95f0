package tolltest

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/app"
)

// HeavyExtraWork is how many more math.Log iterations HeavyVariants'
// provider does per request than the baseline's (160000 against 40000).
const HeavyExtraWork = 120000

// WorkCPU returns the CPU time this machine takes for work iterations of
// the reference services' per-request work, measured here on the calling
// thread's CPU clock (the median of five): what a variant that does that
// much more work per request adds to its CPU per request, whatever the
// machine's load, since a busy machine delays the work but does not make
// it cost more CPU. A test compares a measured difference with it rather
// than a ratio of totals, which a starved service's per-request overhead
// (its runtime's wake-ups, its scheduler's spinning) inflates alike on
// both sides.
func WorkCPU(t *testing.T, work int) time.Duration {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	read := func() time.Duration {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			t.Fatalf("thread CPU clock: %v", err)
		}
		return time.Duration(ts.Nano())
	}
	var took []time.Duration
	sink := 0.0
	for range 5 {
		start := read()
		sink += app.Burn{Work: work}.Do()
		took = append(took, read()-start)
	}
	if sink == 0 {
		t.Fatal("the work computed nothing")
	}
	slices.Sort(took)
	return took[len(took)/2]
}
