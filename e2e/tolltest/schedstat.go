package tolltest

import (
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// CPUSample is what the threads of some processes had run, and waited to
// run while runnable, by a moment, as the kernel counts it
// (/proc/PID/task/TID/schedstat).
type CPUSample struct {
	At     time.Time
	Ran    time.Duration
	Waited time.Duration
}

// CPUSamples are readings in time order.
type CPUSamples []CPUSample

// Between returns what the processes ran and waited between from and to,
// as the samples bound it from within: from the first sample at or after
// from to the last at or before to (zero when none lie between).
func (s CPUSamples) Between(from, to time.Time) (ran, waited time.Duration) {
	i := sort.Search(len(s), func(i int) bool { return !s[i].At.Before(from) })
	j := sort.Search(len(s), func(j int) bool { return s[j].At.After(to) }) - 1
	if i >= len(s) || j < i {
		return 0, 0
	}
	return s[j].Ran - s[i].Ran, s[j].Waited - s[i].Waited
}

// Growth returns what the processes ran and waited from the first sample
// to the last.
func (s CPUSamples) Growth() (ran, waited time.Duration) {
	if len(s) == 0 {
		return 0, 0
	}
	return s[len(s)-1].Ran - s[0].Ran, s[len(s)-1].Waited - s[0].Waited
}

// SampleCPU reads the schedstat of every thread of processes pids now and
// every period after, until the returned function is called, which reads
// once more and returns the samples (a test's cleanup stops it otherwise).
// Each sample sums, over every thread read so far, its latest reading: a
// thread that ends keeps what it ran, one born later counts from when it
// is first read. A reading that finds no thread (the processes ended) adds
// no sample, so the samples are empty when none could ever be read.
func SampleCPU(t *testing.T, pids []int, period time.Duration) func() CPUSamples {
	latest := map[int]CPUSample{} // by thread
	var samples CPUSamples
	read := func() {
		found := false
		for _, pid := range pids {
			threads, err := procfs.AllThreads(pid)
			if err != nil {
				continue // ended
			}
			for _, th := range threads {
				if ss, err := th.Schedstat(); err == nil {
					latest[th.PID] = CPUSample{Ran: time.Duration(ss.RunningNanoseconds), Waited: time.Duration(ss.WaitingNanoseconds)}
					found = true
				}
			}
		}
		if !found {
			return
		}
		sum := CPUSample{At: time.Now()}
		for _, l := range latest {
			sum.Ran += l.Ran
			sum.Waited += l.Waited
		}
		samples = append(samples, sum)
	}
	read()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	var once sync.Once
	end := func() CPUSamples {
		once.Do(func() {
			close(stop)
			<-done
		})
		return samples
	}
	t.Cleanup(func() { end() })
	return end
}
