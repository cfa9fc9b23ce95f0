package report

import (
	"testing"

	"github.com/tollperf/toll/record"
)

// TestVariantWarmup checks how a report's first line says the variants
// were warmed.
func TestVariantWarmup(t *testing.T) {
	until := &record.WarmupUntil{}
	tests := []struct {
		name string
		load record.LoadSettings
		cpus string
		want string
	}{
		{"none", record.LoadSettings{}, "", ""},
		{"at a rate", record.LoadSettings{VariantWarmupS: 90, VariantWarmupRate: 200}, "", ", variant warm-up 1m30s at 200 req/s"},
		{"one user", record.LoadSettings{VariantWarmupS: 60, VariantWarmupUsers: 1}, "", ", variant warm-up 1m0s by 1 user"},
		{"users on every CPU until settled", record.LoadSettings{VariantWarmupS: 120, VariantWarmupUsers: 2, VariantWarmupUntil: until}, "0-1",
			", variant warm-up by 2 users on CPUs 0-1 until the JIT settles, at most 2m0s"},
	}
	for _, tt := range tests {
		m := &record.Manifest{Load: tt.load}
		m.Layout.WarmupCPUs = tt.cpus
		if got := variantWarmup(m); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
