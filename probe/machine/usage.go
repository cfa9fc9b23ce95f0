package machine

// Usage is what happened between two samples. CPU figures are shares of
// the CPU time that passed, from 0 to 1.
type Usage struct {
	// CPU is the busy share of all CPUs together (1 = every CPU busy).
	CPU float64
	// PerCPU is the busy share of each CPU, indexed by CPU number.
	PerCPU []float64
	// Steal is the share of all CPUs' time the hypervisor stole.
	Steal float64
	// PerCPUSteal is the stolen share of each CPU.
	PerCPUSteal []float64
	// MemUsed is the share of memory in use at the later sample.
	MemUsed float64
}

// Between returns the usage from sample a to the later sample b. Each share
// is the change in busy (or stolen) time over the change in total time,
// clamped to [0, 1]; it is 0 when no time was accounted, as when a CPU was
// offline. Per-CPU figures cover the CPUs present in both samples.
func Between(a, b Sample) Usage {
	u := Usage{
		CPU:     share(a.Total, b.Total, CPUTimes.Busy),
		Steal:   share(a.Total, b.Total, steal),
		MemUsed: b.MemUsed(),
	}
	n := min(len(a.PerCPU), len(b.PerCPU))
	u.PerCPU = make([]float64, n)
	u.PerCPUSteal = make([]float64, n)
	for i := range n {
		u.PerCPU[i] = share(a.PerCPU[i], b.PerCPU[i], CPUTimes.Busy)
		u.PerCPUSteal[i] = share(a.PerCPU[i], b.PerCPU[i], steal)
	}
	return u
}

func steal(c CPUTimes) float64 { return c.Steal }

// share is Δpart / Δtotal from x to y, clamped to [0, 1]. The kernel's
// idle and iowait counters can step backwards a little, so a ratio can
// stray outside that range.
func share(x, y CPUTimes, part func(CPUTimes) float64) float64 {
	d := y.Total() - x.Total()
	if d <= 0 {
		return 0
	}
	return min(max((part(y)-part(x))/d, 0), 1)
}
