package probe

import (
	"fmt"
	"time"

	"github.com/prometheus/procfs"
)

// RunDelay returns how long the threads of process pid have waited, in
// all, to run while they were runnable: the time other tasks held the CPUs
// they could run on (the second field of /proc/PID/task/TID/schedstat,
// summed over the threads alive now). Differences over a window tell
// whether a process was held up by its neighbours, a kernel thread
// included. A thread that exits takes its share with it.
func RunDelay(pid int) (time.Duration, error) {
	threads, err := procfs.AllThreads(pid)
	if err != nil {
		return 0, fmt.Errorf("run delay of %d: %w", pid, err)
	}
	var total uint64
	for _, t := range threads {
		st, err := t.Schedstat()
		if err != nil {
			continue // exited since the listing
		}
		total += st.WaitingNanoseconds
	}
	return time.Duration(total), nil
}
