package local

import (
	"testing"
	"time"

	"github.com/tollperf/toll/plan"
)

// readings returns one reading a second from the start, the JVM having
// compiled perS[i] during second i.
func readings(from time.Duration, perS ...time.Duration) []jitPoint {
	ps := []jitPoint{{at: from}}
	var jit time.Duration
	for i, d := range perS {
		jit += d
		ps = append(ps, jitPoint{at: from + time.Duration(i+1)*time.Second, jit: jit})
	}
	return ps
}

func repeat(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestJITSettleRule checks when a variant warm-up's JVMs count as settled:
// below 5 ms/s over the last 10 s, every JVM found, each over a whole
// window.
func TestJITSettleRule(t *testing.T) {
	rule := jitRule{below: 5 * time.Millisecond, over: 10 * time.Second}
	ms := time.Millisecond
	tests := []struct {
		name     string
		history  jitHistory
		settled  bool
		rateOf   string
		wantRate float64
	}{
		{"still compiling", jitHistory{"app": readings(0, repeat(30*ms, 20)...)}, false, "app", 30},
		{"compiling more and more", jitHistory{"app": readings(0, append(repeat(2*ms, 10), repeat(50*ms, 5)...)...)}, false, "app", 26},
		{"settled", jitHistory{"app": readings(0, append(repeat(200*ms, 10), repeat(1*ms, 10)...)...)}, true, "app", 1},
		{"settled but the window not yet over", jitHistory{"app": readings(0, repeat(1*ms, 9)...)}, false, "app", 1},
		{"a burst inside the window", jitHistory{"app": readings(0, append(repeat(1*ms, 15), 60*ms, 1*ms, 1*ms)...)}, false, "app", 6.9},
		{"one JVM settled, the other not", jitHistory{
			"consumer": readings(0, repeat(1*ms, 20)...),
			"provider": readings(0, repeat(8*ms, 20)...)}, false, "provider", 8},
		{"both settled", jitHistory{
			"consumer": readings(0, repeat(1*ms, 20)...),
			"provider": readings(0, repeat(4*ms, 20)...)}, true, "provider", 4},
		{"a JVM that appears late has its own window", jitHistory{
			"consumer": readings(0, repeat(1*ms, 30)...),
			"late":     readings(25*time.Second, repeat(0, 5)...)}, false, "late", 0},
		{"a late JVM, settled over its window", jitHistory{
			"consumer": readings(0, repeat(1*ms, 40)...),
			"late":     readings(25*time.Second, repeat(2*ms, 15)...)}, true, "late", 2},
		{"no JVM: nothing settles, the maximum holds", jitHistory{}, false, "", 0},
		{"one reading", jitHistory{"app": readings(0)}, false, "app", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, rates := rule.settled(tt.history)
			if ok != tt.settled {
				t.Errorf("settled %v, want %v (rates %v)", ok, tt.settled, rates)
			}
			if tt.rateOf != "" {
				if got := rates[tt.rateOf]; got < tt.wantRate-0.01 || got > tt.wantRate+0.01 {
					t.Errorf("%s's rate %.3f ms/s, want %.3f", tt.rateOf, got, tt.wantRate)
				}
			}
		})
	}
}

// TestJITHistoryRestartsWithANewJVM checks that a service whose JVM was
// replaced (its counter fell) starts its window again rather than reading
// a negative rate that would pass for settled.
func TestJITHistoryRestartsWithANewJVM(t *testing.T) {
	rule := jitRule{below: 5 * time.Millisecond, over: 10 * time.Second}
	h := jitHistory{}
	for _, p := range readings(0, repeat(time.Millisecond, 20)...) {
		h.add("app", p)
	}
	if ok, _ := rule.settled(h); !ok {
		t.Fatal("a JVM compiling 1 ms/s for 20 s has not settled")
	}
	for _, p := range readings(21*time.Second, repeat(100*time.Millisecond, 3)...) {
		h.add("app", p) // a new JVM: its counter starts at 0
	}
	ok, rates := rule.settled(h)
	if ok || len(h["app"]) != 4 || rates["app"] < 99 {
		t.Errorf("after a new JVM: settled %v, %d readings, rate %.1f ms/s; want unsettled, 4 readings, 100 ms/s", ok, len(h["app"]), rates["app"])
	}
}

// TestJITSettledBySide checks that each side of a duet is judged on its own
// JVMs: the baseline settled while its partner still compiles (the warm-up
// then lasts for both, but the baseline's record says it settled).
func TestJITSettledBySide(t *testing.T) {
	rule := jitRule{below: 5 * time.Millisecond, over: 10 * time.Second}
	h := jitHistory{
		"baseline/consumer": readings(0, repeat(time.Millisecond, 12)...),
		"otel/consumer":     readings(0, repeat(100*time.Millisecond, 12)...),
	}
	if ok, _ := rule.settled(h); ok {
		t.Error("the pair settled while otel compiles 100 ms/s")
	}
	if ok, _ := rule.settled(h.of("baseline")); !ok {
		t.Error("the baseline, compiling 1 ms/s, did not settle on its own")
	}
	if ok, _ := rule.settled(h.of("otel")); ok {
		t.Error("otel settled on its own while compiling 100 ms/s")
	}
	if got := h.of("base"); len(got) != 0 {
		t.Errorf("a variant named as a prefix of another's took its JVMs: %v", got)
	}
}

// TestJITSidesSettleInTurn checks that each variant's JVMs count as
// settled once they settled together, so that variants quiet at different
// times end the phase, as long as a settled variant does not compile hard
// again. Here otel settles over seconds 10–20 and then compiles again, a
// little (8 ms/s, under twice the 5 ms/s threshold) or hard (40 ms/s), and
// nojit settles over seconds 20–30. No ten seconds are quiet for both.
func TestJITSidesSettleInTurn(t *testing.T) {
	rule := jitRule{below: 5 * time.Millisecond, over: 10 * time.Second}
	ms := time.Millisecond
	owed := []*plan.Trial{{Variant: "otel"}, {Variant: "nojit"}}
	nojit := append(repeat(50*ms, 20), repeat(1*ms, 10)...)
	for _, tc := range []struct {
		again     time.Duration // otel's compilation after it settled
		settledAt int           // the second the phase ends, 0 for none
	}{{8 * ms, 30}, {40 * ms, 0}} {
		otel := append(append(repeat(50*ms, 10), repeat(1*ms, 10)...), repeat(tc.again, 10)...)
		sides := map[string]bool{}
		settledAt := 0
		for sec := 1; sec <= 30; sec++ {
			h := jitHistory{"otel/app": readings(0, otel[:sec]...), "nojit/app": readings(0, nojit[:sec]...)}
			if ok, _ := rule.settled(h); ok {
				t.Fatalf("second %d: both JVMs quiet over one window, the test's histories are wrong", sec)
			}
			if rule.sidesSettled(h, owed, sides) && settledAt == 0 {
				settledAt = sec
			}
		}
		if settledAt != tc.settledAt {
			t.Errorf("otel compiling %v/s after it settled: the phase ended at second %d, want %d (sides %v)", tc.again, settledAt, tc.settledAt, sides)
		}
	}
	// A variant with no JVM found does not hold the others back, and
	// with none found nothing has settled.
	if rule.sidesSettled(jitHistory{}, owed, map[string]bool{}) {
		t.Error("no JVM found: settled")
	}
}

// costReadings returns one reading a second for secs seconds at rate
// requests a second, the variant's CPU per request in second i being
// cpr(i).
func costReadings(secs int, rate uint64, cpr func(i int) time.Duration) []costPoint {
	ps := []costPoint{{}}
	var cpu time.Duration
	var done uint64
	for i := range secs {
		cpu += time.Duration(rate) * cpr(i)
		done += rate
		ps = append(ps, costPoint{at: time.Duration(i+1) * time.Second, cpu: cpu, done: done})
	}
	return ps
}

// TestSteadyCostRule checks when a warm-up toll chose counts a variant's
// cost as steady: its CPU per request within the band over each of the
// last three spans of 5 s, whatever its JIT does, and never before three
// whole spans or while the cost still falls; and, with the requests a
// span of a warm-up that had the CPUs to itself held, never while a
// warm-up served too few requests a second to show its cost fall.
func TestSteadyCostRule(t *testing.T) {
	r := defaultSteady(10 * time.Second)
	us := time.Microsecond
	// starved serves 20 requests a second, its cost falling 1% for every
	// 100 requests: 1% a span of 5 s, 5% a span of 500 requests.
	starved := costReadings(200, 20, func(i int) time.Duration { return time.Duration(float64(400*us) * (1 - 0.002*float64(i))) })
	tests := []struct {
		name   string
		ps     []costPoint
		span   uint64 // requests a span of the unhindered warm-up held
		steady bool
	}{
		{"flat for 40 s", costReadings(40, 100, func(int) time.Duration { return 300 * us }), 0, true},
		{"flat, but only 12 s", costReadings(12, 100, func(int) time.Duration { return 300 * us }), 0, false},
		{"falling 1% a second", costReadings(40, 100, func(i int) time.Duration { return time.Duration(float64(400*us) * (1 - 0.01*float64(i))) }), 0, false},
		{"fell, then flat for 30 s", costReadings(60, 100, func(i int) time.Duration {
			if i < 30 {
				return 600 * us
			}
			return 300 * us
		}), 0, true},
		{"small jitter", costReadings(40, 100, func(i int) time.Duration { return 300*us + time.Duration(i%3)*us }), 0, true},
		{"no requests", costReadings(40, 0, func(int) time.Duration { return 300 * us }), 0, false},
		{"starved, spans of seconds", starved, 0, true},
		{"starved, spans of requests", starved, 500, false},
		{"starved, flat, spans of requests", costReadings(100, 20, func(int) time.Duration { return 300 * us }), 500, true},
		{"starved, too few requests yet", costReadings(60, 20, func(int) time.Duration { return 300 * us }), 500, false},
	}
	for _, tt := range tests {
		if got := r.steady(tt.ps, tt.span); got != tt.steady {
			t.Errorf("%s: steady %v, want %v", tt.name, got, tt.steady)
		}
	}
}

// TestSteadyEnds checks what ends a warm-up by the steady rule as a
// variant's compilers work: a flat cost ends it over spans of seconds
// while they are quiet, and over spans of requests while they are busy;
// in a warm-up that settles a start swapped in still compiling (quiet),
// never while they are busy, however flat its cost.
func TestSteadyEnds(t *testing.T) {
	flat := costReadings(100, 20, func(int) time.Duration { return 300 * time.Microsecond })
	tests := []struct {
		name        string
		quiet, busy bool
		span        uint64
		ends        bool
	}{
		{"compilers quiet", false, false, 0, true},
		{"compilers busy, spans of requests held", false, true, 500, true},
		{"compilers busy, too few requests a span", false, true, 5000, false},
		{"settling, compilers quiet", true, false, 0, true},
		{"settling, compilers busy", true, true, 500, false},
		{"settling, compilers busy, spans of seconds", true, true, 0, false},
	}
	for _, tt := range tests {
		r := defaultSteady(10 * time.Second)
		r.quiet = tt.quiet
		if got := r.ends(flat, tt.busy, tt.span); got != tt.ends {
			t.Errorf("%s: ends %v, want %v", tt.name, got, tt.ends)
		}
	}
}

// TestSteadySpan checks the requests a span of the steady rule held as a
// warm-up ended: its rate over the last three spans times one span, and
// none before its readings cover them.
func TestSteadySpan(t *testing.T) {
	r := defaultSteady(10 * time.Second)
	flat := func(int) time.Duration { return 300 * time.Microsecond }
	tests := []struct {
		name string
		ps   []costPoint
		want uint64
	}{
		{"100 a second", costReadings(40, 100, flat), 500},
		{"20 a second", costReadings(40, 20, flat), 100},
		{"only 10 s", costReadings(10, 100, flat), 0},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		if got := r.span(tt.ps); got != tt.want {
			t.Errorf("%s: span %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestJITBusy checks when a JVM's compilers count as busy, so that a
// warm-up beside the rounds counts its steady spans in requests: while
// one of a variant's JVMs spends a fifth of the wall time or more in
// compiles, over the rule's window or what its readings have of it.
func TestJITBusy(t *testing.T) {
	r := jitRule{below: 5 * time.Millisecond, over: 10 * time.Second}
	// compiling returns readings over secs seconds at ms of JIT time a
	// second.
	compiling := func(secs int, ms float64) []jitPoint {
		var ps []jitPoint
		for i := 0; i <= secs; i++ {
			ps = append(ps, jitPoint{at: time.Duration(i) * time.Second, jit: time.Duration(float64(i) * ms * float64(time.Millisecond))})
		}
		return ps
	}
	tests := []struct {
		name string
		h    jitHistory
		busy bool
	}{
		{"queued, 900 ms/s", jitHistory{"otel/app": compiling(30, 900)}, true},
		{"trickling, 20 ms/s", jitHistory{"otel/app": compiling(30, 20)}, false},
		{"one of two queued", jitHistory{"otel/app": compiling(30, 20), "otel/db": compiling(30, 400)}, true},
		{"queued, only 3 s so far", jitHistory{"otel/app": compiling(3, 900)}, true},
		{"no JVM", jitHistory{}, false},
	}
	for _, tt := range tests {
		if got := r.busy(tt.h); got != tt.busy {
			t.Errorf("%s: busy %v, want %v", tt.name, got, tt.busy)
		}
	}
}
