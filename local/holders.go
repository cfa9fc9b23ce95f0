package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/probe"
	"github.com/tollperf/toll/record"
)

// holderLeast is the least CPU time on the load CPUs that names a holder.
const holderLeast = time.Millisecond

// holderBudget is the least time a reading of the machine's tasks may
// take: a trial whose reading takes longer names no holders, and on a
// machine of many thousands of threads, where every reading does
// (holderStrikes in a row), the run reads no more and says so once. The
// reading before a load may take until holderLead before the load is due
// to start (newOrigin's 100 ms ahead, less the trial's own preparations),
// and the one after it holderAfter times the budget, since nothing waits
// for it but the trial's record: on a busy 2-core machine (load 20) toll
// gets a tenth of a CPU, and a reading of a few milliseconds of CPU takes
// tens of milliseconds.
const holderBudget = 30 * time.Millisecond

// holderLead is how long before its load is due the reading before it
// gives up.
const holderLead = 10 * time.Millisecond

// holderAfter is how many budgets the reading after a load may take.
const holderAfter = 10

// holderStrikes is how many readings in a row past holderBudget end the
// readings for the run.
const holderStrikes = 3

// holderMeter reads which other processes and kernel threads ran on the
// load CPUs during a trial's load: on a machine whose scheduler puts its
// housekeeping on the idlest CPU (the load generator's), a kernel thread
// that runs for milliseconds at a time holds requests back by as much.
// It reads before and after the load, never during it. Trials run at once
// (a duet's sides, together's) share one meter: their loads share the load
// CPUs and the same seconds, so it reads once before the first side's load
// and once after the last side's, where each side reading for itself would
// read while the others' loads run, and several times over.
type holderMeter struct {
	b      *Backend
	cpus   pin.CPUs
	skip   func(pid, ppid int) bool
	names  map[int]string // toll's own processes that may run there: its sinks
	budget time.Duration  // holderBudget
	before probe.TaskTimes

	loading sync.WaitGroup // the sides whose loads have not ended
	began   sync.Once
	ended   sync.Once
	held    []record.CPUHolder
	unread  bool // a reading took past its budget: no holders named
}

// holders returns the meter of the load CPUs' other tasks during the loads
// of sides trials run at once: every process but toll's own and the
// services of every running variant (with their children), which run on
// their own CPUs and are measured as such. toll's sinks, on the load CPUs
// at idle priority, are named as such. Each side calls begin before its
// load, leave once its load has ended (or it ends without one), and end.
func (b *Backend) holders(sides int) *holderMeter {
	m := &holderMeter{budget: holderBudget}
	m.loading.Add(sides)
	cpus, err := pin.Parse(b.loadCPUs)
	b.mu.Lock()
	off := b.holdersOff
	b.mu.Unlock()
	if err != nil || len(cpus) == 0 || off {
		return m
	}
	own := map[int]bool{os.Getpid(): true}
	running, _ := b.runningNow()
	for _, st := range running {
		for _, svc := range st.group.Services() {
			own[svc.Pid()] = true
		}
	}
	names := map[int]string{}
	for v, sk := range b.sinks {
		if sk != nil && sk.svc != nil {
			names[sk.svc.Pid()] = "toll's sink of " + v
		}
	}
	m.b, m.cpus, m.names = b, cpus, names
	m.skip = func(pid, ppid int) bool {
		if own[pid] || own[ppid] && ppid != os.Getpid() {
			own[pid] = true // a service's child (processes are listed by pid, parents first)
			return true
		}
		return false
	}
	return m
}

// begin reads the tasks' CPU before the load, which is due at origin: the
// first side to call it reads, and the others wait for that reading.
func (m *holderMeter) begin(origin time.Time) {
	m.began.Do(func() {
		if m.cpus != nil {
			m.before = m.read(max(m.budget, time.Until(origin.Add(-holderLead))))
		}
	})
}

// leave tells the meter that one side's load has ended.
func (m *holderMeter) leave() { m.loading.Done() }

// read reads the tasks within budget; nil past it, and no more readings
// in the run after holderStrikes such readings in a row.
func (m *holderMeter) read(budget time.Duration) probe.TaskTimes {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	tt, err := probe.ReadTaskTimes(ctx, m.skip)
	slow := errors.Is(err, context.DeadlineExceeded)
	m.b.mu.Lock()
	if !slow {
		m.b.holdersSlow = 0
	} else {
		m.b.holdersSlow++
	}
	off := !m.b.holdersOff && m.b.holdersSlow >= holderStrikes
	if off {
		m.b.holdersOff = true
	}
	m.b.mu.Unlock()
	if off {
		m.b.note(fmt.Sprintf("the machine's tasks took more than %s to read %d times in a row, so later trials do not name what ran on the load CPUs (load.load_cpus_held_by)", budget, holderStrikes))
	}
	return tt
}

// end waits until every side has left, and returns the processes that
// ran on the load CPUs since begin, most CPU first (the same for every
// side), and whether the meter read them: false when the load CPUs are
// meant to be read but a reading, before or after the load, took past its
// budget, so that no holder named means "not read", not "none".
func (m *holderMeter) end() ([]record.CPUHolder, bool) {
	m.loading.Wait()
	m.ended.Do(func() {
		if m.cpus == nil {
			return
		}
		if m.before == nil {
			m.unread = true
			return
		}
		after := m.read(holderAfter * m.budget)
		if after == nil {
			m.unread = true
			return
		}
		for _, h := range probe.Holders(m.before, after, m.cpus, holderLeast) {
			if n, ok := m.names[h.PID]; ok {
				h.Name = n
			}
			m.held = append(m.held, record.CPUHolder{Name: h.Name, PID: h.PID, Kernel: h.Kernel, MS: float64(h.CPU) / float64(time.Millisecond)})
		}
	})
	return m.held, !m.unread
}
