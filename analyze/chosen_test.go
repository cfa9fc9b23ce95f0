package analyze

import (
	"regexp"
	"testing"

	"github.com/tollperf/toll/record"
)

// settingNamed matches the scenario settings and flags a warning may tell
// the user to change.
var settingNamed = regexp.MustCompile(`load\.variant_warmup|load\.warmup|starts:|--starts|restart less|more rounds|raise `)

// TestPrecisionWarningsNameNoSetting checks that in precision mode the
// warnings about what toll chooses (warm-up, starts, rounds) say what toll
// did, and that with a fixed design they still name the setting.
func TestPrecisionWarningsNameNoSetting(t *testing.T) {
	rounds := map[int]*TrialCosts{1: {Services: map[string]map[Cost]float64{"app": {JITTime: 50}}}}
	wt := &record.Trial{Variant: "otel", Index: 3, Round: 2, VariantWarmupS: 300,
		VariantWarmup: &record.VariantWarmup{MaxS: 300, JITMsPerS: map[string]float64{"app": 20}}}
	drift := func(chosen bool) string {
		return Drift{Variant: "otel", Cost: CPUPerRequest, Rounds: 10, ChangePct: -30, chosen: chosen}.message("10 req/s")
	}
	pct := jvmStartNoise(record.DefaultCalibration())
	for _, tt := range []struct {
		name          string
		fixed, chosen string
	}{
		{"JIT compiling under load", jitWarning("otel", "10 req/s", rounds, false), jitWarning("otel", "10 req/s", rounds, true)},
		{"warm-up unsettled", warmupWarning(wt, &record.WarmupUntil{JITBelowMs: 5, OverS: 10}), warmupWarning(wt, &record.WarmupUntil{JITBelowMs: 5, OverS: 10, Auto: true})},
		{"drift", drift(false), drift(true)},
		{"JVM started once", jvmStartWarning(pct, 1, false), jvmStartWarning(pct, 3, true)},
	} {
		if !settingNamed.MatchString(tt.fixed) {
			t.Errorf("%s, fixed design: names no setting: %s", tt.name, tt.fixed)
		}
		if tt.chosen == "" || settingNamed.MatchString(tt.chosen) {
			t.Errorf("%s, precision mode: %q", tt.name, tt.chosen)
		}
	}
}
