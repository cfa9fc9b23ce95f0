package analyze

import "testing"

// TestSidesLoadLighter checks what toll loads at once after a first round
// of sides loaded at once on one shared CPU: the same where the CPU had
// room; pairs where every variant at once saturated it and the baseline
// beside its heaviest variant, at their target rates, fits within
// FitBusy; one variant at a time where no pair fits, where a duet
// saturated it, or where a side that fell short of its rate needs more
// than it used; nothing where other work kept the CPU busy (fewer sides
// would not free it) or for a closed model's users; the busy share neighbours at idle priority took,
// and trials left out, not counted.
func TestSidesLoadLighter(t *testing.T) {
	// side is a trial of variant v that used cores of CPU 1, achieved got
	// of its 100 req/s, with CPU 1 busy busy% over the round.
	side := func(v string, cores, got, busy float64) sideTrial {
		return sideTrial{rate: 100, tc: &TrialCosts{Variant: v, Costs: map[Cost]float64{
			CPUCores: cores, Throughput: got, CPUBusy(0): 40, CPUBusy(1): busy}}}
	}
	// A start warming ahead of its turn at idle priority took 40% of CPU 1.
	var idle []sideTrial
	for _, v := range []string{"baseline", "extra", "twin"} {
		s := side(v, 0.2, 100, 100)
		s.tc.idleBusy = map[int]float64{1: 40}
		idle = append(idle, s)
	}
	// Users, no rate: each side took a third of the CPU it would fill.
	closed := []sideTrial{side("baseline", 0.33, 100, 100), side("extra", 0.34, 100, 100), side("twin", 0.33, 100, 100)}
	for i := range closed {
		closed[i].rate = 0
	}
	left := side("heavy", 0.5, 100, 100)
	left.tc.Excluded = true
	for _, tt := range []struct {
		name  string
		mode  string
		sides []sideTrial
		want  string
	}{
		{"together with room", "together", []sideTrial{side("baseline", 0.2, 100, 65), side("extra", 0.22, 100, 65), side("twin", 0.2, 100, 65)}, ""},
		{"together saturated, a pair fits", "together", []sideTrial{side("baseline", 0.33, 100, 100), side("extra", 0.34, 100, 100), side("twin", 0.33, 100, 100)}, "duet"},
		{"together saturated, no pair fits", "together", []sideTrial{side("baseline", 0.3, 100, 100), side("extra", 0.55, 100, 100), side("twin", 0.15, 100, 100)}, "sequential"},
		{"short of the rate, so no pair fits", "together", []sideTrial{side("baseline", 0.33, 60, 100), side("extra", 0.34, 55, 100), side("twin", 0.33, 60, 100)}, "sequential"},
		{"a duet saturated", "duet", []sideTrial{side("baseline", 0.5, 95, 100), side("extra", 0.5, 95, 100)}, "sequential"},
		{"busy at idle priority", "together", idle, ""},
		{"the saturated trial left out", "together", []sideTrial{side("baseline", 0.2, 100, 70), left}, ""},
		{"one at a time already", "sequential", []sideTrial{side("baseline", 0.9, 100, 100)}, ""},
		{"a closed model saturated", "together", closed, ""},
		{"saturated by other work", "together", []sideTrial{side("baseline", 0.1, 100, 100), side("extra", 0.12, 100, 100), side("twin", 0.1, 100, 100)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := sidesLoad([]int{1}, tt.sides)
			if !ok {
				t.Fatal("no load read")
			}
			if got := l.Lighter(tt.mode, "baseline"); got != tt.want {
				t.Errorf("Lighter(%q) = %q, want %q (busiest %.0f%%, a pair %.0f%%)", tt.mode, got, tt.want, l.Busiest(), l.Projected("baseline", "extra"))
			}
		})
	}
}
