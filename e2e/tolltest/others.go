package tolltest

import (
	"syscall"
	"time"

	"github.com/tollperf/toll/probe/machine"
)

// OthersCPU starts measuring how busy the rest of the machine is: the
// function it returns gives the CPUs, on average since OthersCPU was
// called, that went to processes other than this test binary and the
// children it has waited for (toll and every service toll started and
// reaped). A test that finds its JVMs starved calls it once toll has
// exited, to tell a machine shared with other work from a fault of toll's;
// it returns -1 where /proc/stat or the test's usage cannot be read.
func OthersCPU() func() float64 {
	start := time.Now()
	busy0, ok0 := machineBusy()
	own0, ok1 := ownCPU()
	return func() float64 {
		busy, ok2 := machineBusy()
		own, ok3 := ownCPU()
		wall := time.Since(start).Seconds()
		if !ok0 || !ok1 || !ok2 || !ok3 || wall <= 0 {
			return -1
		}
		if others := (busy - busy0) - (own - own0); others > 0 {
			return others / wall
		}
		return 0
	}
}

// machineBusy returns the seconds every CPU has spent busy since boot, as
// toll's machine sampler reads them.
func machineBusy() (float64, bool) {
	m, err := machine.NewSampler()
	if err != nil {
		return 0, false
	}
	st, err := m.Sample()
	if err != nil {
		return 0, false
	}
	return st.Total.Busy(), true
}

// ownCPU returns the CPU seconds of this process and of the children it
// has waited for, with theirs.
func ownCPU() (float64, bool) {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return 0, false
	}
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return sec(self.Utime) + sec(self.Stime) + sec(children.Utime) + sec(children.Stime), true
}
