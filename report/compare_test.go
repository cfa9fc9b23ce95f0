package report

import (
	"testing"

	"github.com/tollperf/toll/analyze"
)

// TestDifferenceText checks the English of how two runs differ.
func TestDifferenceText(t *testing.T) {
	tests := []struct {
		d    analyze.RunDifference
		want string
	}{
		{analyze.RunDifference{What: analyze.DiffCPUModel, A: "AMD EPYC", B: "Intel Xeon"}, `CPU model: "AMD EPYC" in A, "Intel Xeon" in B`},
		{analyze.RunDifference{What: analyze.DiffCgroup, A: "v1", B: "v2"}, `cgroup version: "v1" in A, "v2" in B`},
		{analyze.RunDifference{What: analyze.DiffService, Service: "provider", A: `command ["app"]`}, `service "provider": command ["app"] in A, absent in B`},
	}
	for _, tt := range tests {
		if got := DifferenceText(tt.d); got != tt.want {
			t.Errorf("DifferenceText(%+v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
