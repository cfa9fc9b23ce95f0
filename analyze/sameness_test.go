package analyze

import (
	"slices"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestRunDifferences checks what makes two runs not alike: the machine's
// CPU model, cores, kernel and cgroup version when both manifests record
// them, and services run by another command or image, or missing.
func TestRunDifferences(t *testing.T) {
	m := func(model string, cores int, kernel, cgroup string) *record.Manifest {
		return &record.Manifest{Host: record.Host{CPUModel: model, Cores: cores, Kernel: kernel}, Layout: record.Layout{Cgroup: cgroup}}
	}
	for _, tt := range []struct {
		name     string
		a, b     *record.Manifest
		sa, sb   map[string]string
		want     []string
		machines int
	}{
		{"alike", m("EPYC", 2, "6.1", "v2"), m("EPYC", 2, "6.1", "v2"), map[string]string{"p": "x"}, map[string]string{"p": "x"}, nil, 0},
		{"another CPU", m("EPYC", 2, "6.1", "v2"), m("Xeon", 2, "6.1", "v2"), nil, nil, []string{DiffCPUModel}, 1},
		{"every machine field", m("EPYC", 2, "6.1", "v1"), m("Xeon", 4, "6.8", "v2"), nil, nil, []string{DiffCPUModel, DiffCores, DiffKernel, DiffCgroup}, 4},
		{"unrecorded is not a difference", m("", 0, "", ""), m("Xeon", 4, "6.8", "v2"), nil, nil, nil, 0},
		{"another command", m("EPYC", 2, "6.1", "v2"), m("EPYC", 2, "6.1", "v2"), map[string]string{"p": "x"}, map[string]string{"p": "y"}, []string{DiffService}, 0},
		{"a service missing", m("EPYC", 2, "6.1", "v2"), m("EPYC", 2, "6.1", "v2"), map[string]string{"p": "x", "c": "z"}, map[string]string{"p": "x"}, []string{DiffService}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			diffs := append(MachineDifferences(tt.a, tt.b), ServiceDifferences(tt.sa, tt.sb)...)
			var got []string
			machines := 0
			for _, d := range diffs {
				got = append(got, d.What)
				if d.Machine() {
					machines++
				}
			}
			if !slices.Equal(got, tt.want) || machines != tt.machines {
				t.Errorf("differences %v (%d of the machine), want %v (%d)", diffs, machines, tt.want, tt.machines)
			}
		})
	}
}
