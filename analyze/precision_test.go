package analyze

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/stats"
)

// ratios returns n log ratios of mean mu whose spread is sd (in log
// units), alternating around mu so that the sample SD is about sd.
func ratios(n int, mu, sd float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		if i%2 == 0 {
			xs[i] = mu + sd
		} else {
			xs[i] = mu - sd
		}
	}
	return xs
}

func TestDecide(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5, MinStarts: 2, Budget: 10 * time.Minute}
	one := func(xs []float64, launches []int) []PairedSeries {
		return []PairedSeries{{Variant: "otel", Cost: CPUPerRequest, LogRatios: xs, Launches: launches}}
	}
	launches := func(n, starts int) []int {
		ls := make([]int, n)
		for i := range ls {
			ls[i] = i * starts / n
		}
		return ls
	}
	tests := []struct {
		name     string
		series   []PairedSeries
		p        Progress
		want     StopReason
		newStart bool
	}{
		{"narrow after the minimum stops", one(ratios(8, 0.05, 0.01), nil),
			Progress{Rounds: 8, Elapsed: 8 * time.Minute / 10, RoundTime: 6 * time.Second}, Reached, false},
		{"narrow before the minimum rounds goes on", one(ratios(4, 0.05, 0.001), nil),
			Progress{Rounds: 4, Elapsed: 24 * time.Second, RoundTime: 6 * time.Second}, Continue, false},
		{"wide goes on", one(ratios(8, 0.05, 0.08), nil),
			Progress{Rounds: 8, Elapsed: 48 * time.Second, RoundTime: 6 * time.Second}, Continue, false},
		{"wide at the budget stops", one(ratios(80, 0.05, 0.3), nil),
			Progress{Rounds: 80, Elapsed: 9*time.Minute + 55*time.Second, RoundTime: 6 * time.Second}, BudgetSpent, false},
		{"a round that would pass the budget is not begun", one(ratios(20, 0.05, 0.3), nil),
			Progress{Rounds: 20, Elapsed: 10*time.Minute - 5*time.Second, RoundTime: 6 * time.Second}, BudgetSpent, false},
		{"narrow under one JVM start goes on to a second", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 8, Elapsed: time.Minute, RoundTime: 6 * time.Second, StartTime: 30 * time.Second}, Continue, true},
		{"the start-to-start term asks for more starts", one(ratios(20, 0.01, 0.001), launches(20, 2)),
			Progress{Rounds: 20, Starts: 2, RoundsThisStart: 10, Elapsed: 3 * time.Minute, RoundTime: 6 * time.Second, StartTime: 30 * time.Second}, Continue, true},
		{"no new start the budget cannot hold", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 8, Elapsed: 9 * time.Minute, RoundTime: 6 * time.Second, StartTime: 2 * time.Minute}, Continue, false},
		{"a start warmed ahead of its turn fits where a cold one does not", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 8, Elapsed: 9 * time.Minute, RoundTime: 6 * time.Second, StartTime: 2 * time.Minute,
				ReadyStarts: 1, SwapTime: 2 * time.Second}, Continue, true},
		{"a new start is due after its share of rounds", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 7, Elapsed: 2 * time.Minute, RoundTime: 6 * time.Second, StartTime: 2 * time.Minute}, Continue, true},
		{"a new start waits for the one warming beside the rounds", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 7, Elapsed: 2 * time.Minute, RoundTime: 6 * time.Second, StartTime: 2 * time.Minute,
				WarmingStarts: 1, SwapTime: 2 * time.Second}, Continue, false},
		{"a start warming beside the rounds is waited for past twice its share", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 14, Elapsed: 2 * time.Minute, RoundTime: 6 * time.Second, StartTime: 2 * time.Minute,
				WarmingStarts: 1, SwapTime: 2 * time.Second}, Continue, false},
		{"with its least starts a run never takes a start still warming", one(ratios(20, 0.01, 0.001), launches(20, 2)),
			Progress{Rounds: 20, Starts: 2, RoundsThisStart: 10, Elapsed: 9*time.Minute + 45*time.Second, RoundTime: 6 * time.Second, StartTime: 30 * time.Second,
				WarmingStarts: 1, SwapTime: 2 * time.Second}, Continue, false},
		{"with its least starts a run takes a warmed start", one(ratios(20, 0.01, 0.001), launches(20, 2)),
			Progress{Rounds: 20, Starts: 2, RoundsThisStart: 10, Elapsed: 3 * time.Minute, RoundTime: 6 * time.Second, StartTime: 30 * time.Second,
				ReadyStarts: 1, SwapTime: 2 * time.Second}, Continue, true},
		{"a start warming beside the rounds is not waited for past the budget", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 7, Elapsed: 9*time.Minute + 45*time.Second, RoundTime: 6 * time.Second, StartTime: 2 * time.Minute,
				WarmingStarts: 1, SwapTime: 2 * time.Second}, Continue, true},
		{"a start none warms yet begins to warm beside the rounds first", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 7, Elapsed: 2 * time.Minute, RoundTime: 6 * time.Second, StartTime: 2 * time.Minute,
				WarmAhead: true, SwapTime: 2 * time.Second}, Continue, false},
		{"a start none warms is taken cold where the budget holds no warm-up beside", one(ratios(8, 0.01, 0.001), launches(8, 1)),
			Progress{Rounds: 8, Starts: 1, RoundsThisStart: 7, Elapsed: 9*time.Minute + 45*time.Second, RoundTime: 6 * time.Second, StartTime: 2 * time.Second,
				WarmAhead: true, SwapTime: 2 * time.Second}, Continue, true},
		{"no series cannot reach", nil, Progress{Rounds: 8, Elapsed: time.Minute}, Continue, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(goal, tt.series, tt.p)
			if d.Reason != tt.want {
				t.Fatalf("reason %q, want %q (%+v)", d.Reason, tt.want, d)
			}
			if d.NewStart != tt.newStart {
				t.Errorf("new start %v, want %v (%+v)", d.NewStart, tt.newStart, d)
			}
		})
	}
}

// The estimate of what reaches the target is the classic (t·s/target)²,
// and the rounds it names do reach it.
func TestDecideEstimate(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5}
	xs := ratios(10, 0, 0.05)
	d := Decide(goal, []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: xs}}, Progress{Rounds: 10, RoundTime: time.Second})
	if d.Reason != Continue || d.MoreRounds <= 0 {
		t.Fatalf("%+v: want more rounds", d)
	}
	s := stats.TInterval(xs).StdDev
	classic := math.Pow(1.96*s/math.Log1p(0.03), 2)
	n := 10 + d.MoreRounds
	if float64(n) < classic || float64(n) > 1.3*classic+3 {
		t.Errorf("%d rounds in all, want about (t·s/target)² = %.0f", n, classic)
	}
	if d.MoreTime != time.Duration(d.MoreRounds)*time.Second {
		t.Errorf("more time %v for %d rounds of 1s", d.MoreTime, d.MoreRounds)
	}
	more := ratios(n, 0, 0.05)
	if d := Decide(goal, []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: more}}, Progress{Rounds: n, RoundTime: time.Second}); d.Reason != Reached {
		t.Errorf("after the %d rounds estimated: %+v", n, d)
	}
}

// An estimate many budgets long is no estimate: the spread of the rounds
// so far extrapolated a hundredfold. Decide calls it out of reach, and
// gives the same spread under a budget ten times longer its estimate.
func TestDecideOutOfReach(t *testing.T) {
	xs := ratios(20, 0.1, 0.5) // about 1,100 rounds of 5 s reach ±3%: 90 min
	for _, tc := range []struct {
		budget time.Duration
		reach  bool
	}{{5 * time.Minute, false}, {60 * time.Minute, true}} {
		goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5, Budget: tc.budget}
		d := Decide(goal, []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: xs}},
			Progress{Rounds: 20, Elapsed: 100 * time.Second, RoundTime: 5 * time.Second})
		if d.Reason != Continue {
			t.Fatalf("budget %v: %+v, want to continue", tc.budget, d)
		}
		if got := d.MoreRounds >= 0; got != tc.reach {
			t.Errorf("budget %v: more rounds %d (%v), want an estimate %v", tc.budget, d.MoreRounds, d.MoreTime, tc.reach)
		}
	}
}

// Estimating with a JVM's start-to-start term: rounds alone cannot go
// below it, so the estimate asks for starts.
func TestDecideEstimateStarts(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 2.5}}, MinRounds: 5, MinStarts: 2}
	xs := ratios(12, 0, 0.01)
	ls := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	d := Decide(goal, []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: xs, Launches: ls}},
		Progress{Rounds: 12, Starts: 2, RoundsThisStart: 6, RoundTime: 5 * time.Second, StartTime: time.Minute})
	if d.Reason != Continue || d.MoreStarts == 0 || !d.NewStart {
		t.Fatalf("%+v: want more starts", d)
	}
	if want := time.Duration(d.MoreRounds)*5*time.Second + time.Duration(d.MoreStarts)*time.Minute; d.MoreTime != want {
		t.Errorf("more time %v, want %v", d.MoreTime, want)
	}
}

// A start waits for its share of the rounds the budget will run, not for
// its share of an estimate the budget cannot hold: JVMs that take 6
// minutes to start and warm, in a 25-minute budget, start a second time
// once the first start has had half the rounds that fit, even though
// the estimate asks for hundreds.
func TestDecideSpreadsStartsOverTheBudget(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5, MinStarts: 2, Budget: 25 * time.Minute}
	series := func(n int) []PairedSeries {
		return []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: ratios(n, 0.2, 0.25), Launches: make([]int, n)}}
	}
	at := func(rounds int) Progress {
		// Six minutes to start and warm, then ten seconds a round.
		return Progress{Rounds: rounds, Starts: 1, RoundsThisStart: rounds, RoundTime: 10 * time.Second, StartTime: 6 * time.Minute,
			Elapsed: 6*time.Minute + time.Duration(rounds)*10*time.Second}
	}
	// After 40 rounds (12:40), the rest of the budget less a start holds
	// 38 rounds: 78 in all, 39 a start.
	for _, tc := range []struct {
		rounds   int
		newStart bool
	}{{30, false}, {40, true}} {
		d := Decide(goal, series(tc.rounds), at(tc.rounds))
		if d.Reason != Continue || d.MoreRounds < 100 {
			t.Fatalf("after %d rounds: %+v, want an estimate of hundreds more rounds", tc.rounds, d)
		}
		if d.NewStart != tc.newStart {
			t.Errorf("after %d rounds: new start %v, want %v (%+v)", tc.rounds, d.NewStart, tc.newStart, d)
		}
	}
}

// When the start-to-start term dominates and the estimate's starts do not
// fit in the budget, a run aims at the starts that do: those that leave the
// narrowest interval, each with its share of the rounds, with every start
// taking at most MaxStartShare of the budget in all.
func TestDecideAimsAtTheStartsTheBudgetHolds(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5, MinStarts: 2, Budget: 25 * time.Minute}
	at := func(rounds int, startTime time.Duration) (PairedSeries, Progress) {
		return PairedSeries{Variant: "v", Cost: CPUPerRequest, LogRatios: ratios(rounds, 0.2, 0.005), Launches: make([]int, rounds)},
			Progress{Rounds: rounds, Starts: 1, RoundsThisStart: rounds, RoundTime: 10 * time.Second, StartTime: startTime,
				Elapsed: startTime + time.Duration(rounds)*10*time.Second}
	}
	for _, tc := range []struct {
		name      string
		rounds    int
		startTime time.Duration
		fit       int
		newStart  bool
	}{
		// Starts of a minute: five take a fifth of the budget.
		{"cheap starts", 20, time.Minute, 4, true},
		// Starts of two minutes: two of them take 4 of its 5 minutes.
		{"dear starts", 12, 2 * time.Minute, 1, true},
		// Starts of six minutes: the one run is past a fifth of the
		// budget, and the estimate (33 min) does not fit, but the
		// minimum of two starts holds: the second comes once the first
		// has had half the rounds the rest of the budget holds (39).
		{"starts past the share, early", 12, 6 * time.Minute, 0, false},
		{"starts past the share, at its share", 40, 6 * time.Minute, 0, true},
	} {
		s, p := at(tc.rounds, tc.startTime)
		d := Decide(goal, []PairedSeries{s}, p)
		if d.Worst < 0 || d.Widths[d.Worst].FitStarts != tc.fit || d.MoreStarts <= tc.fit {
			t.Fatalf("%s: %+v, want an estimate of more than %d starts, %d within the budget", tc.name, d, tc.fit, tc.fit)
		}
		if d.NewStart != tc.newStart {
			t.Errorf("%s: new start %v, want %v (%+v)", tc.name, d.NewStart, tc.newStart, d)
		}
		if w := d.Widths[d.Worst]; w.StartHalfPct <= 0 || w.StartHalfPct > w.HalfPct {
			t.Errorf("%s: the start term's part %.2f%% of ±%.2f%%, want within it", tc.name, w.StartHalfPct, w.HalfPct)
		}
	}
}

// When one target is out of the budget's reach (a JVM's CPU with its
// compilers' bursts) and another is not (the same CPU without them, held
// back by the start-to-start term), the run spreads its rounds over the
// starts the reachable target needs, or, when the budget reaches neither,
// over those that narrow the nearest target most: not over the one or two
// starts that suit the hopeless series.
func TestDecideAimsAtTheTargetItCanReach(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}, {CPUNoJIT, 3}}, MinRounds: 5, MinStarts: 2, Budget: 25 * time.Minute}
	// Two starts: 20 rounds under the first, 8 under the second; without
	// the compilers' CPU the second start reads 4% above the first.
	const first, second = 20, 8
	n := first + second
	ls := make([]int, n)
	nojit := ratios(n, 0.2, 0.01)
	for i := first; i < n; i++ {
		ls[i] = 1
		nojit[i] += 0.04
	}
	series := []PairedSeries{
		{Variant: "v", Cost: CPUPerRequest, LogRatios: ratios(n, 0.2, 0.25), Launches: ls},
		{Variant: "v", Cost: CPUNoJIT, LogRatios: nojit, Launches: ls},
	}
	for _, tc := range []struct {
		name      string
		startTime time.Duration
	}{
		{"the budget holds the starts the target needs", time.Minute},
		// Out of the budget's reach, starts that cost 3 minutes each
		// already took more than a fifth of it: the rounds get the rest.
		{"the budget holds neither target", 3 * time.Minute},
	} {
		p := Progress{Rounds: n, Starts: 2, RoundsThisStart: second, RoundTime: 10 * time.Second, StartTime: tc.startTime,
			Elapsed: 2*tc.startTime + time.Duration(n)*10*time.Second}
		d := Decide(goal, series, p)
		if d.Reason != Continue || d.Widths[0].MoreRounds < 100 || d.Widths[1].MoreStarts < 3 {
			t.Fatalf("%s: %+v, want the CPU with the compilers' far from its target and the one without them asking for starts", tc.name, d)
		}
		if want := tc.startTime < 2*time.Minute; d.NewStart != want {
			t.Errorf("%s: after %d rounds under the second start, new start %v, want %v (%+v)", tc.name, second, d.NewStart, want, d)
		}
	}
}

// TestStoppingRuleCoverage simulates runs stopped by Decide and counts how
// often the final 95% interval holds the true change. Stopping on the width
// of a t interval barely changes its coverage; stopping on its verdict
// would not keep it. docs/precision.md reports the figures.
func TestStoppingRuleCoverage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		noise func(r *rand.Rand) float64
		jvm   bool
		runs  int
	}{
		{"normal", func(r *rand.Rand) float64 { return 0.06 * r.NormFloat64() }, false, 400},
		{"heavy-tailed t3", func(r *rand.Rand) float64 { return 0.06 / math.Sqrt(3) * studentT3(r) }, false, 400},
		{"normal, JVM started once", func(r *rand.Rand) float64 { return 0.02 * r.NormFloat64() }, true, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cover, rounds := simulateCoverage(tc.noise, tc.jvm, tc.runs, 1)
			t.Logf("coverage %.3f, mean rounds %.1f", cover, rounds)
			if cover < 0.90 {
				t.Errorf("coverage %.3f, want about 0.95", cover)
			}
		})
	}
}

// simulateCoverage runs n simulated precision runs (target ±3%, the true
// change +5%) and returns the share whose final interval holds the true
// change, and their mean rounds. Each run's level carries the run-level
// term, and with jvm each start a draw of the JVM start-to-start term,
// both of the sizes the analysis assumes.
func simulateCoverage(noise func(*rand.Rand) float64, jvm bool, n int, seed uint64) (coverage, meanRounds float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	truth := math.Log(1.05)
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: DefaultMinRounds, MinStarts: DefaultMinStarts, Budget: time.Hour}
	cal := record.DefaultCalibration()
	runSD := math.Sqrt(2) * math.Log1p(cal.RunNoisePct/100)
	jvmSD := math.Sqrt(2) * math.Log1p(cal.JVMStartNoisePct[string(CPUPerRequest)]/100)
	hit, total := 0, 0
	for range n {
		level := truth + runSD*r.NormFloat64()
		starts, this := 0, 0
		startDraw := 0.0
		if jvm {
			starts, startDraw = 1, jvmSD*r.NormFloat64()
		}
		var xs []float64
		var ls []int
		for {
			xs = append(xs, level+startDraw+noise(r))
			this++
			if jvm {
				ls = append(ls, starts-1)
			}
			s := []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: xs, Launches: ls}}
			d := Decide(goal, s, Progress{Rounds: len(xs), Starts: starts, RoundsThisStart: this,
				Elapsed: time.Duration(len(xs)) * 5 * time.Second, RoundTime: 5 * time.Second, StartTime: 30 * time.Second})
			if d.Reason != Continue {
				fixed, _ := sideFixedLog(record.DefaultCalibration(), CPUPerRequest, starts, xs, ls)
				iv := stats.TInterval(xs).Widened(2 * fixed)
				if iv.Low <= truth && truth <= iv.High {
					hit++
				}
				total += len(xs)
				break
			}
			if d.NewStart {
				starts++
				this = 0
				startDraw = jvmSD * r.NormFloat64()
			}
		}
	}
	return float64(hit) / float64(n), float64(total) / float64(n)
}

// studentT3 draws from Student's t with 3 degrees of freedom (variance 3).
func studentT3(r *rand.Rand) float64 {
	z := r.NormFloat64()
	var chi float64
	for range 3 {
		g := r.NormFloat64()
		chi += g * g
	}
	return z / math.Sqrt(chi/3)
}

// TestDecideCedes checks that a load step whose target is out of reach in
// what is left of the whole run's budget stops at its minimum and leaves
// its share to the steps after it, and that the last step, a step that
// can reach its target, or one before its minimum, does not.
func TestDecideCedes(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5, Budget: 5 * time.Minute}
	wide := []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: ratios(6, 0.1, 0.2)}}  // hours away
	near := []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: ratios(6, 0.1, 0.04)}} // minutes away
	at := Progress{Rounds: 6, Elapsed: time.Minute, RoundTime: 10 * time.Second, RunLeft: 9 * time.Minute, Later: true}
	last := at
	last.Later = false
	early := at
	early.Rounds = 4
	for _, tt := range []struct {
		name   string
		series []PairedSeries
		p      Progress
		want   StopReason
	}{
		{"out of reach, steps after it", wide, at, Ceded},
		{"out of reach, the last step", wide, last, Continue},
		{"out of reach, before its minimum", []PairedSeries{{Variant: "v", Cost: CPUPerRequest, LogRatios: ratios(4, 0.1, 0.2)}}, early, Continue},
		{"within reach", near, at, Continue},
	} {
		if d := Decide(goal, tt.series, tt.p); d.Reason != tt.want {
			t.Errorf("%s: %q (more rounds %d, %v), want %q", tt.name, d.Reason, d.MoreRounds, d.MoreTime, tt.want)
		}
	}
}

// TestDecideIdle checks the stopping rule of an idle load step, which has
// no request for a per-request target: it stops after its minimum rounds
// over its minimum starts, starts again when a start has had its share
// of them, and stops when the budget holds no more rounds.
func TestDecideIdle(t *testing.T) {
	g := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5, MinStarts: 2, Budget: 3 * time.Minute}
	for _, tt := range []struct {
		name     string
		p        Progress
		want     StopReason
		newStart bool
	}{
		{"first rounds", Progress{Rounds: 1, Starts: 1, RoundsThisStart: 1, RoundTime: 5 * time.Second}, Continue, false},
		{"a start's share", Progress{Rounds: 2, Starts: 1, RoundsThisStart: 2, RoundTime: 5 * time.Second}, Continue, true},
		{"rounds but one start", Progress{Rounds: 5, Starts: 1, RoundsThisStart: 5, RoundTime: 5 * time.Second}, Continue, true},
		{"its minimum", Progress{Rounds: 5, Starts: 2, RoundsThisStart: 3, RoundTime: 5 * time.Second}, Idle, false},
		{"started every round", Progress{Rounds: 5, RoundTime: 5 * time.Second}, Idle, false},
		{"the budget", Progress{Rounds: 3, Starts: 2, RoundsThisStart: 1, RoundTime: 5 * time.Second, Elapsed: 178 * time.Second}, BudgetSpent, false},
	} {
		d := DecideIdle(g, tt.p)
		if d.Reason != tt.want || d.NewStart != tt.newStart {
			t.Errorf("%s: %s, new start %v; want %s, %v", tt.name, d.Reason, d.NewStart, tt.want, tt.newStart)
		}
	}
}

// TestDecideStartsWarmedAhead: where every start the rule plans is warmed
// beside the rounds, a start costs the stop of the one before, and the
// first start's warm-up is spent, not a share of the budget that further
// starts may take. A run whose start-to-start term holds its interval
// back then plans the starts that narrow it, where one whose starts warm
// at their turn, each as long as the first, plans at most one.
func TestDecideStartsWarmedAhead(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5, MinStarts: 2, Budget: 10 * time.Minute}
	const rounds = 6
	s := PairedSeries{Variant: "v", Cost: CPUPerRequest, LogRatios: ratios(rounds, 0.07, 0.01), Launches: make([]int, rounds)}
	p := Progress{Rounds: rounds, Starts: 1, RoundsThisStart: rounds, RoundTime: 20 * time.Second, StartTime: 2 * time.Minute,
		SwapTime: 5 * time.Second, Elapsed: 2*time.Minute + rounds*20*time.Second}
	atTurn := Decide(goal, []PairedSeries{s}, p)
	p.WarmAhead = true
	ahead := Decide(goal, []PairedSeries{s}, p)
	if atTurn.Planned > 1 {
		t.Errorf("starts warmed at their turn: %d planned, want at most 1 (%+v)", atTurn.Planned, atTurn)
	}
	if ahead.Planned < 3 {
		t.Errorf("starts warmed beside the rounds: %d planned, want 3 or more (%+v)", ahead.Planned, ahead)
	}
}

// TestDecidePlansOnlyStartsItCanUse checks that a run whose starts warm
// beside the rounds plans no further start that could not be warmed,
// swapped in, settled and run two rounds counted within the budget: late
// in the Java agents' run a spare warmed through the last start's rounds
// and never took its turn. Earlier in the budget it plans them.
func TestDecidePlansOnlyStartsItCanUse(t *testing.T) {
	goal := Goal{Targets: []Target{{CPUPerRequest, 3}}, MinRounds: 5, MinStarts: 2, Budget: 25 * time.Minute}
	ls := make([]int, 90)
	for i := range ls {
		ls[i] = i / 45
	}
	// Two starts that disagree: only many more starts narrow it.
	xs := ratios(90, 0.3, 0.02)
	for i := 45; i < 90; i++ {
		xs[i] += 0.04
	}
	series := []PairedSeries{{Variant: "elastic", Cost: CPUPerRequest, LogRatios: xs, Launches: ls}}
	for _, tt := range []struct {
		name    string
		elapsed time.Duration
		want    func(int) bool
	}{
		{"late: only the ready start", 19 * time.Minute, func(n int) bool { return n == 1 }},
		{"early: further starts", 3 * time.Minute, func(n int) bool { return n > 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := Progress{Rounds: 90, Starts: 2, RoundsThisStart: 45, Elapsed: tt.elapsed, RoundTime: 11 * time.Second,
				StartTime: 4 * time.Minute, ReadyStarts: 1, SwapTime: 5 * time.Second, WarmAhead: true,
				WarmBeside: 6 * time.Minute, SettleRounds: 2}
			d := Decide(goal, series, p)
			if d.Reason != Continue || !tt.want(d.Planned) {
				t.Errorf("%s, new start %v, %d further starts planned: %+v", d.Reason, d.NewStart, d.Planned, d)
			}
		})
	}
}
