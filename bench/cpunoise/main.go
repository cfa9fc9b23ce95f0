// Command cpunoise measures how the CPU cost of identical work drifts on
// this machine: it repeats a fixed math.Log loop at a given duty cycle and
// prints, per window, the thread CPU time one loop took. Two copies run at
// once, on the same CPU or on different ones, show whether the drift is
// shared (and so cancels in a paired ratio) or not. bench/cpunoise.sh runs
// the comparison.
//
// Usage: cpunoise WINDOW COUNT DUTY   (e.g. cpunoise 2s 30 0.3)
package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/app"
)

// loopIters is the work of one loop: about 1.5 ms on a current core, like
// the reference consumer's --work 150000.
const loopIters = 150000

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cpunoise:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: cpunoise WINDOW COUNT DUTY")
	}
	win, err := time.ParseDuration(args[0])
	if err != nil || win <= 0 {
		return fmt.Errorf("window %q: want a positive duration", args[0])
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n <= 0 || n > 10000 {
		return fmt.Errorf("count %q: want 1..10000", args[1])
	}
	duty, err := strconv.ParseFloat(args[2], 64)
	if err != nil || duty <= 0 || duty > 1 {
		return fmt.Errorf("duty %q: want a fraction in (0, 1]", args[2])
	}
	runtime.LockOSThread()
	work := app.Burn{Work: loopIters}
	var sink float64
	for w := 0; w < n; w++ {
		end := time.Now().Add(win)
		loops := 0
		c0, err := threadCPU()
		if err != nil {
			return err
		}
		for time.Now().Before(end) {
			t0 := time.Now()
			sink += work.Do()
			loops++
			if duty < 1 {
				time.Sleep(time.Duration(float64(time.Since(t0)) * (1 - duty) / duty))
			}
		}
		c1, err := threadCPU()
		if err != nil {
			return err
		}
		fmt.Printf("%d %.1f\n", w, float64((c1-c0).Nanoseconds())/1000/float64(loops))
	}
	if math.IsNaN(sink) {
		fmt.Println("nan")
	}
	return nil
}

// threadCPU returns the CPU time the calling thread has used.
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("read thread CPU clock: %w", err)
	}
	return time.Duration(ts.Nano()), nil
}
