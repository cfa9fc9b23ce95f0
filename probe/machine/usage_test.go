package machine

import (
	"math"
	"testing"
)

func TestBetween(t *testing.T) {
	// c builds CPU times from busy (user), idle, iowait and steal seconds.
	c := func(user, idle, iowait, steal float64) CPUTimes {
		return CPUTimes{User: user, Idle: idle, IOWait: iowait, Steal: steal}
	}
	tests := []struct {
		name          string
		a, b          Sample
		cpu, steal    float64
		perCPU, perSt []float64
		mem           float64
	}{
		{
			name: "one CPU busy, one idle",
			a:    Sample{Total: c(10, 10, 0, 0), PerCPU: []CPUTimes{c(5, 5, 0, 0), c(5, 5, 0, 0)}},
			b:    Sample{Total: c(12, 12, 0, 0), PerCPU: []CPUTimes{c(7, 5, 0, 0), c(5, 7, 0, 0)}},
			cpu:  0.5, perCPU: []float64{1, 0}, perSt: []float64{0, 0},
		},
		{
			name: "steal is busy and reported apart",
			a:    Sample{Total: c(0, 0, 0, 0), PerCPU: []CPUTimes{c(0, 0, 0, 0)}},
			b:    Sample{Total: c(1, 2, 0, 1), PerCPU: []CPUTimes{c(1, 2, 0, 1)}},
			cpu:  0.5, steal: 0.25, perCPU: []float64{0.5}, perSt: []float64{0.25},
		},
		{
			name: "iowait is not busy",
			a:    Sample{Total: c(0, 0, 0, 0)},
			b:    Sample{Total: c(1, 1, 2, 0)},
			cpu:  0.25, perCPU: []float64{}, perSt: []float64{},
		},
		{
			name:   "no time passed",
			a:      Sample{Total: c(1, 1, 0, 0), PerCPU: []CPUTimes{c(1, 1, 0, 0)}},
			b:      Sample{Total: c(1, 1, 0, 0), PerCPU: []CPUTimes{c(1, 1, 0, 0)}},
			perCPU: []float64{0}, perSt: []float64{0},
		},
		{
			name: "idle stepped back: clamped to 1",
			a:    Sample{Total: c(10, 10, 0, 0)},
			b:    Sample{Total: c(12, 9.5, 0, 0)},
			cpu:  1, perCPU: []float64{}, perSt: []float64{},
		},
		{
			name: "a CPU came online: only CPUs in both",
			a:    Sample{Total: c(0, 0, 0, 0), PerCPU: []CPUTimes{c(0, 0, 0, 0)}},
			b:    Sample{Total: c(3, 1, 0, 0), PerCPU: []CPUTimes{c(1, 1, 0, 0), c(2, 0, 0, 0)}},
			cpu:  0.75, perCPU: []float64{0.5}, perSt: []float64{0},
		},
		{
			name: "memory at the later sample",
			a:    Sample{MemTotal: 100, MemAvailable: 90},
			b:    Sample{MemTotal: 100, MemAvailable: 40},
			mem:  0.6, perCPU: []float64{}, perSt: []float64{},
		},
		{
			name:   "available above total",
			b:      Sample{MemTotal: 100, MemAvailable: 140},
			perCPU: []float64{}, perSt: []float64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := Between(tt.a, tt.b)
			if !approx(u.CPU, tt.cpu) || !approx(u.Steal, tt.steal) || !approx(u.MemUsed, tt.mem) {
				t.Errorf("CPU %g steal %g memory %g; want %g %g %g", u.CPU, u.Steal, u.MemUsed, tt.cpu, tt.steal, tt.mem)
			}
			if len(u.PerCPU) != len(tt.perCPU) || len(u.PerCPUSteal) != len(tt.perSt) {
				t.Fatalf("per CPU %v steal %v; want %v %v", u.PerCPU, u.PerCPUSteal, tt.perCPU, tt.perSt)
			}
			for i := range tt.perCPU {
				if !approx(u.PerCPU[i], tt.perCPU[i]) || !approx(u.PerCPUSteal[i], tt.perSt[i]) {
					t.Errorf("CPU %d: busy %g steal %g; want %g %g", i, u.PerCPU[i], u.PerCPUSteal[i], tt.perCPU[i], tt.perSt[i])
				}
			}
		})
	}
}

func TestCPUTimes(t *testing.T) {
	c := CPUTimes{User: 1, Nice: 2, System: 3, Idle: 100, IOWait: 200, IRQ: 4, SoftIRQ: 5, Steal: 6}
	if c.Busy() != 21 || c.Total() != 321 {
		t.Errorf("busy %g total %g, want 21 321", c.Busy(), c.Total())
	}
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
