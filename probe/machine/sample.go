package machine

import (
	"fmt"
	"time"

	"github.com/prometheus/procfs"
)

// CPUTimes are the cumulative seconds one CPU, or all CPUs together, spent
// in each state since boot, as /proc/stat reports them. Guest time is
// already included in User and Nice, so it is not listed separately.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
}

// Busy is the time spent in every state but Idle and IOWait. It includes
// Steal: time the hypervisor ran something else while this CPU had work.
// A tickless kernel measures Idle exactly but charges the busy states by
// the timer tick, so work that runs between ticks is missing here; toll's
// analysis takes a CPU's busy share as 1 − Idle / elapsed time instead.
func (c CPUTimes) Busy() float64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
}

// Total is the time accounted in every state.
func (c CPUTimes) Total() float64 { return c.Busy() + c.Idle + c.IOWait }

// Sample is one reading of the machine's cumulative counters.
type Sample struct {
	// Time is when the sample was taken.
	Time time.Time
	// Total is the sum over all CPUs.
	Total CPUTimes
	// PerCPU is indexed by CPU number. A CPU missing from /proc/stat
	// (offline) has zero times.
	PerCPU []CPUTimes
	// MemTotal and MemAvailable are bytes, from /proc/meminfo. On kernels
	// older than 3.14, which lack MemAvailable, it is estimated as
	// MemFree + Buffers + Cached.
	MemTotal, MemAvailable uint64
}

// MemUsed is the share of memory in use (not available) at the sample,
// from 0 to 1; 0 when MemTotal is unknown.
func (s Sample) MemUsed() float64 {
	if s.MemTotal == 0 {
		return 0
	}
	return float64(s.MemTotal-min(s.MemAvailable, s.MemTotal)) / float64(s.MemTotal)
}

// Sampler reads Samples from a proc filesystem. It is safe for concurrent
// use.
type Sampler struct {
	fs    procfs.FS
	mount string
}

// NewSampler opens /proc.
func NewSampler() (*Sampler, error) {
	return NewSamplerAt(procfs.DefaultMountPoint)
}

// NewSamplerAt opens a proc filesystem mounted at mount: /proc, or a
// directory holding captured stat and meminfo files.
func NewSamplerAt(mount string) (*Sampler, error) {
	fs, err := procfs.NewFS(mount)
	if err != nil {
		return nil, fmt.Errorf("machine: open proc filesystem %s: %w", mount, err)
	}
	return &Sampler{fs: fs, mount: mount}, nil
}

// Sample reads stat and meminfo.
func (s *Sampler) Sample() (Sample, error) {
	out := Sample{Time: time.Now()}
	st, err := s.fs.Stat()
	if err != nil {
		return Sample{}, fmt.Errorf("machine: read %s/stat: %w", s.mount, err)
	}
	out.Total = cpuTimes(st.CPUTotal)
	n := 0
	for id := range st.CPU {
		n = max(n, int(id)+1)
	}
	out.PerCPU = make([]CPUTimes, n)
	for id, c := range st.CPU {
		out.PerCPU[id] = cpuTimes(c)
	}
	mi, err := s.fs.Meminfo()
	if err != nil {
		return Sample{}, fmt.Errorf("machine: read %s/meminfo: %w", s.mount, err)
	}
	if mi.MemTotal == nil {
		return Sample{}, fmt.Errorf("machine: read %s/meminfo: no MemTotal", s.mount)
	}
	out.MemTotal = *mi.MemTotal * 1024
	if mi.MemAvailable != nil {
		out.MemAvailable = *mi.MemAvailable * 1024
	} else {
		for _, kb := range []*uint64{mi.MemFree, mi.Buffers, mi.Cached} {
			if kb != nil {
				out.MemAvailable += *kb * 1024
			}
		}
	}
	return out, nil
}

func cpuTimes(c procfs.CPUStat) CPUTimes {
	return CPUTimes{
		User: c.User, Nice: c.Nice, System: c.System, Idle: c.Idle, IOWait: c.Iowait,
		IRQ: c.IRQ, SoftIRQ: c.SoftIRQ, Steal: c.Steal,
	}
}
