package analyze

import (
	"slices"
	"strconv"

	"github.com/tollperf/toll/record"
)

// What a RunDifference is about.
const (
	DiffCPUModel = "cpu_model"
	DiffCores    = "cores"
	DiffKernel   = "kernel"
	DiffCgroup   = "cgroup"
	DiffService  = "service"
)

// RunDifference is one way in which two runs compared with CompareRuns
// did not run alike: a machine of another CPU model, core count, kernel
// or cgroup version, or a service run by another command or image. Each
// run's overheads stand on its own, but their change between the runs
// then holds the difference of machines or services as well as the
// agent's.
type RunDifference struct {
	// What is DiffCPUModel, DiffCores, DiffKernel, DiffCgroup or
	// DiffService.
	What string `json:"what"`
	// Service names the service, for DiffService.
	Service string `json:"service,omitempty"`
	// A and B are what each run recorded; empty for a service that one
	// of them does not have.
	A string `json:"a"`
	B string `json:"b"`
}

// Machine says whether the difference is of the machine, not of a
// service.
func (d RunDifference) Machine() bool { return d.What != DiffService }

// MachineDifferences returns how the machines two runs' manifests record
// differ: CPU model, cores, kernel and cgroup version, each compared only
// when both recorded it.
func MachineDifferences(a, b *record.Manifest) []RunDifference {
	var out []RunDifference
	add := func(what, x, y string) {
		if x != "" && y != "" && x != "0" && y != "0" && x != y {
			out = append(out, RunDifference{What: what, A: x, B: y})
		}
	}
	add(DiffCPUModel, a.Host.CPUModel, b.Host.CPUModel)
	add(DiffCores, strconv.Itoa(a.Host.Cores), strconv.Itoa(b.Host.Cores))
	add(DiffKernel, a.Host.Kernel, b.Host.Kernel)
	add(DiffCgroup, a.Layout.Cgroup, b.Layout.Cgroup)
	return out
}

// ServiceDifferences returns the services that two runs ran differently:
// a and b map each service's name to how it was run (its command or
// image, as the scenario gives it), and a service one run has and the
// other lacks differs too.
func ServiceDifferences(a, b map[string]string) []RunDifference {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []RunDifference
	for _, n := range names {
		if a[n] != b[n] {
			out = append(out, RunDifference{What: DiffService, Service: n, A: a[n], B: b[n]})
		}
	}
	return out
}
