package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPrecisionMode checks when a scenario runs in precision mode and what
// its block reads as.
func TestPrecisionMode(t *testing.T) {
	tests := []struct {
		name    string
		add     string
		on      bool
		targets map[string]float64
		budget  time.Duration
	}{
		{"no rounds: precision by default", "", true, map[string]float64{"cpu_per_request_ms": 3}, DefaultBudget},
		{"fixed rounds keep the fixed design", "rounds: 10\n", false, map[string]float64{}, 0},
		{"a block with a list of costs and targets",
			"precision:\n  target: 2%\n  costs: [cpu_per_request, {cost: cpu_per_request_nojit, target: 4%}]\n  budget: 25m\n",
			true, map[string]float64{"cpu_per_request_ms": 2, "cpu_per_request_nojit_ms": 4}, 25 * time.Minute},
		{"latency and throughput as primary costs",
			"precision:\n  costs: [cpu_per_request, {cost: latency_mean, target: 10%}, {cost: latency_p90, target: 15%}, latency_p99, {cost: throughput, target: 5%}]\n",
			true, map[string]float64{"cpu_per_request_ms": 3, "latency_mean_ms": 10, "latency_p90_ms": 15, "latency_p99_ms": 3, "throughput_rps": 5}, DefaultBudget},
		{"a flow block", "precision: {target: 5, budget: 2m}\n", true, map[string]float64{"cpu_per_request_ms": 5}, 2 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse("demo.yaml", []byte(good+tt.add), testMachine)
			if err != nil {
				t.Fatal(err)
			}
			p := s.Precision
			if p.On != tt.on {
				t.Fatalf("precision mode %v, want %v", p.On, tt.on)
			}
			if !tt.on {
				return
			}
			got := p.Targets()
			if len(got) != len(tt.targets) {
				t.Errorf("targets %v, want %v", got, tt.targets)
			}
			for c, v := range tt.targets {
				if got[c] != v {
					t.Errorf("targets %v, want %v", got, tt.targets)
				}
			}
			if p.Budget.D() != tt.budget || p.MinRounds != 5 || p.MinStarts != 2 {
				t.Errorf("budget %s min rounds %d min starts %d", p.Budget, p.MinRounds, p.MinStarts)
			}
		})
	}
}

// TestPrecisionRefusesBadValues checks the block's errors name file, line
// and field.
func TestPrecisionRefusesBadValues(t *testing.T) {
	tests := []struct {
		add, field, reason string
	}{
		{"rounds: 5\nprecision: {target: 3%}\n", "precision", "not both"},
		{"precision: {target: 0.01%}\n", "precision.target", "not between 0.1% and 50%"},
		{"precision: {target: 80}\n", "precision.target", "not between"},
		{"precision: {target: lots}\n", "precision.target", "not a percentage"},
		{"precision: {budget: 48h}\n", "precision.budget", "toll's limit"},
		{"precision: {budget: 1s}\n", "precision.budget", "cannot hold the least run that gives an interval"},
		{"precision:\n  costs: [latency_p999]\n", "precision.costs[0]", "not a primary cost"},
		{"mode: together\nprecision:\n  costs: [latency_mean]\n", "precision.costs[0]", "latencies do not compare"},
		{"precision:\n  costs: [cpu_cores, cpu_cores]\n", "precision.costs[1]", "named twice"},
		{"precision:\n  costs: [{cost: cpu_cores, target: 90%}]\n", "precision.costs[0].target", "not between"},
		{"precision: {min_rounds: 1}\n", "precision.min_rounds", "two rounds"},
		{"starts: 3\n", "starts", "toll chooses how many times"},
	}
	for _, tt := range tests {
		t.Run(tt.field+" "+tt.reason, func(t *testing.T) {
			_, err := parse("demo.yaml", []byte(good+tt.add), testMachine)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err %v, want a scenario error", err)
			}
			if e.Line < 22 || !strings.Contains(err.Error(), "demo.yaml:") || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("err %q (line %d), want %s at line ≥ 22 with %q", err, e.Line, tt.field, tt.reason)
			}
			if !strings.HasPrefix(tt.field, e.Field) {
				t.Errorf("field %q, want %q (%v)", e.Field, tt.field, err)
			}
		})
	}
}

// TestPrecisionOverrides checks --precision and --budget: they put a run
// with fixed rounds into precision mode, and --rounds puts a run with a
// precision block back into a fixed design.
func TestPrecisionOverrides(t *testing.T) {
	dir := t.TempDir()
	fixed := filepath.Join(dir, "fixed.yaml")
	prec := filepath.Join(dir, "prec.yaml")
	if err := os.WriteFile(fixed, []byte(good+"rounds: 20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prec, []byte(good+"precision: {target: 2%, budget: 20m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pct, budget, two := 4.5, 3*time.Minute, 2
	s, err := ReadWith(fixed, Overrides{Precision: &pct, Budget: &budget})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Precision.On || s.Precision.Targets()["cpu_per_request_ms"] != 4.5 || s.Precision.Budget.D() != budget {
		t.Errorf("--precision 4.5%% --budget 3m: %+v", s.Precision)
	}
	s, err = ReadWith(prec, Overrides{Budget: &budget})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Precision.On || s.Precision.Targets()["cpu_per_request_ms"] != 2 || s.Precision.Budget.D() != budget {
		t.Errorf("--budget 3m over a block: %+v", s.Precision)
	}
	s, err = ReadWith(prec, Overrides{Rounds: &two})
	if err != nil {
		t.Fatal(err)
	}
	if s.Precision.On || s.Rounds != 2 {
		t.Errorf("--rounds 2 over a block: precision %v rounds %d", s.Precision.On, s.Rounds)
	}
	if _, err := ReadWith(prec, Overrides{Rounds: &two, Budget: &budget}); err == nil {
		t.Error("--rounds with --budget: no error")
	}
	bad := 0.0
	if _, err := ReadWith(fixed, Overrides{Precision: &bad}); err == nil || !strings.Contains(err.Error(), "--precision 0%") {
		t.Errorf("--precision 0%%: %v", err)
	}
}

// TestWarmupChosenInPrecisionMode checks that a run in precision mode
// that names no variant warm-up gets toll's (a JVM until it settles, other
// runtimes briefly, on every CPU unless the scenario places its services
// itself), and that one it names, or a fixed design, keeps its own.
func TestWarmupChosenInPrecisionMode(t *testing.T) {
	for _, tt := range []struct {
		name    string
		add     string
		auto    bool
		allCPUs bool
	}{
		{"precision, no warm-up named", "", true, true},
		{"precision, a warm-up named", "", false, false},
		{"fixed rounds", "rounds: 5\n", false, false},
		{"precision, restarted every round", "restart: per-round\n", false, false},
		{"precision, pinning off", "pinning: {off: true}\n", true, false},
	} {
		// A JVM's services start once, and get a warm-up; those toll
		// starts every round get none (TestScheduleChosen).
		src := strings.Replace(good, "{args: [--trace, otel], env: {A: b}}", "{args: [--trace, otel], env: {JAVA_TOOL_OPTIONS: -javaagent:/a.jar}}", 1) + tt.add
		if tt.name == "precision, a warm-up named" {
			src = strings.Replace(src, "  rate: 100\n", "  rate: 100\n  variant_warmup: 20s\n", 1)
		}
		s, err := parse("demo.yaml", []byte(src), testMachine)
		if err != nil {
			t.Fatal(err)
		}
		l := s.Load
		if l.VariantWarmupAuto != tt.auto {
			t.Errorf("%s: chosen by toll %v, want %v", tt.name, l.VariantWarmupAuto, tt.auto)
		}
		if all := s.Pinning.Warmup == WarmupAllCPUs; all != tt.allCPUs || s.Pinning.WarmupAuto != tt.allCPUs {
			t.Errorf("%s: warm-up on every CPU %v (chosen by toll %v), want %v", tt.name, all, s.Pinning.WarmupAuto, tt.allCPUs)
		}
		if tt.auto && (l.VariantWarmupUntil == nil || l.VariantWarmupUntil.JITBelow.D() != DefaultJITBelow || l.VariantWarmup.D() != DefaultJVMWarmupMax) {
			t.Errorf("%s: warm-up %s until %+v", tt.name, l.VariantWarmup, l.VariantWarmupUntil)
		}
		if tt.name == "precision, a warm-up named" && (l.VariantWarmup.D() != 20*time.Second || l.VariantWarmupUntil != nil) {
			t.Errorf("%s: warm-up %s until %+v, want the scenario's 20s", tt.name, l.VariantWarmup, l.VariantWarmupUntil)
		}
	}
}
