package scenario

import (
	"testing"
	"time"
)

// TestLeastPrecisionRun checks the least run that gives an interval: the
// variants' shortest warm-ups, then two rounds of every step, trials run
// at once counted once.
func TestLeastPrecisionRun(t *testing.T) {
	load := Load{Warmup: Duration(time.Second), Duration: Duration(2 * time.Second), Rate: 10}
	three := []Variant{{Name: "baseline"}, {Name: "a"}, {Name: "b"}}
	for _, tt := range []struct {
		name  string
		mode  string
		warm  time.Duration
		until *WarmupUntil
		want  time.Duration
	}{
		{"sequential, no warm-up", ModeSequential, 0, nil, 2 * 3 * 3 * time.Second},
		{"sequential, a fixed warm-up", ModeSequential, 4 * time.Second, nil, 4*time.Second + 18*time.Second},
		{"until a JVM settles, at the soonest", ModeSequential, 5 * time.Minute, &WarmupUntil{Over: Duration(10 * time.Second)}, 10*time.Second + 18*time.Second},
		{"duet", ModeDuet, 0, nil, 2 * 2 * 3 * time.Second},
		{"together", ModeTogether, 4 * time.Second, nil, 4*time.Second + 2*3*time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := load
			l.VariantWarmup, l.VariantWarmupUntil = Duration(tt.warm), tt.until
			got, how := leastPrecisionRun(&Scenario{Mode: tt.mode, Variants: three, Load: l})
			if got != tt.want {
				t.Errorf("least %s (%s), want %s", got, how, tt.want)
			}
		})
	}
}
