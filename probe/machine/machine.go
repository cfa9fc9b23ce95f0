// Package machine samples the machine as a whole from /proc: CPU time per
// CPU (busy, idle, steal) and memory in use. toll uses it to show how busy
// the machine was around a trial and to flag trials where its own CPUs were
// saturated or the hypervisor stole time.
package machine

import (
	"fmt"
	"time"

	"github.com/prometheus/procfs"
)

// CPUTimes are cumulative seconds a CPU (or all CPUs) spent in each state.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
}

// Busy is the time spent on anything but idling and waiting for I/O.
func (c CPUTimes) Busy() float64 { return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal }

// Total is the time accounted in every state.
func (c CPUTimes) Total() float64 { return c.Busy() + c.Idle + c.IOWait }

// Sample is one reading of the machine's cumulative counters.
type Sample struct {
	Time   time.Time
	Total  CPUTimes
	PerCPU []CPUTimes // index = CPU number
	// MemTotal and MemAvailable are bytes, from /proc/meminfo.
	MemTotal, MemAvailable uint64
}

// MemUsed is the share of memory in use (not available), 0 to 1.
func (s Sample) MemUsed() float64 {
	if s.MemTotal == 0 {
		return 0
	}
	return float64(s.MemTotal-min(s.MemAvailable, s.MemTotal)) / float64(s.MemTotal)
}

// Sampler reads Samples.
type Sampler struct {
	fs procfs.FS
}

// NewSampler opens /proc.
func NewSampler() (*Sampler, error) {
	return NewSamplerAt(procfs.DefaultMountPoint)
}

// NewSamplerAt reads a proc filesystem mounted at mount (a fixture in tests).
func NewSamplerAt(mount string) (*Sampler, error) {
	fs, err := procfs.NewFS(mount)
	if err != nil {
		return nil, fmt.Errorf("machine: open %s: %w", mount, err)
	}
	return &Sampler{fs: fs}, nil
}

// Sample reads /proc/stat and /proc/meminfo.
func (s *Sampler) Sample() (Sample, error) {
	out := Sample{Time: time.Now()}
	st, err := s.fs.Stat()
	if err != nil {
		return out, fmt.Errorf("machine: read stat: %w", err)
	}
	out.Total = times(st.CPUTotal)
	n := 0
	for id := range st.CPU {
		n = max(n, int(id)+1)
	}
	out.PerCPU = make([]CPUTimes, n)
	for id, c := range st.CPU {
		out.PerCPU[id] = times(c)
	}
	mi, err := s.fs.Meminfo()
	if err != nil {
		return out, fmt.Errorf("machine: read meminfo: %w", err)
	}
	if mi.MemTotal != nil {
		out.MemTotal = *mi.MemTotal * 1024
	}
	if mi.MemAvailable != nil {
		out.MemAvailable = *mi.MemAvailable * 1024
	}
	return out, nil
}

func times(c procfs.CPUStat) CPUTimes {
	return CPUTimes{User: c.User, Nice: c.Nice, System: c.System, Idle: c.Idle, IOWait: c.Iowait,
		IRQ: c.IRQ, SoftIRQ: c.SoftIRQ, Steal: c.Steal}
}

// Usage is what happened between two samples, as shares from 0 to 1.
type Usage struct {
	CPU         float64   // busy share of all CPUs
	PerCPU      []float64 // busy share of each CPU
	Steal       float64   // stolen share of all CPUs
	PerCPUSteal []float64
	MemUsed     float64 // at the later sample
}

// Between returns the usage from a to b: for each figure,
// Δbusy / Δtotal (0 when no time was accounted).
func Between(a, b Sample) Usage {
	share := func(x, y CPUTimes, part func(CPUTimes) float64) float64 {
		d := y.Total() - x.Total()
		if d <= 0 {
			return 0
		}
		return (part(y) - part(x)) / d
	}
	busy := func(c CPUTimes) float64 { return c.Busy() }
	steal := func(c CPUTimes) float64 { return c.Steal }
	u := Usage{CPU: share(a.Total, b.Total, busy), Steal: share(a.Total, b.Total, steal), MemUsed: b.MemUsed()}
	for i := range min(len(a.PerCPU), len(b.PerCPU)) {
		u.PerCPU = append(u.PerCPU, share(a.PerCPU[i], b.PerCPU[i], busy))
		u.PerCPUSteal = append(u.PerCPUSteal, share(a.PerCPU[i], b.PerCPU[i], steal))
	}
	return u
}
