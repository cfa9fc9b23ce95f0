package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tollperf/toll/record"
)

// TestSettledFrom checks the cut of a start's transient: the rounds of a
// compile queue worked off are cut, a start that settled before its first
// round, however its compilers burst now and then, loses none, nor does
// one whose compilers work harder later, nor one too short to tell.
func TestSettledFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// bursty is a settled JVM's compilers: under 2 ms/s, now and then a
	// burst of up to 30.
	bursty := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 2 * rng.Float64()
			if rng.IntN(10) == 0 {
				xs[i] = 30 * rng.Float64()
			}
		}
		return xs
	}
	queue := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 20 + 40*rng.Float64()
		}
		return xs
	}
	tests := []struct {
		name     string
		xs       []float64
		from, to int
	}{
		{"20 rounds of a queue, then 60 settled", append(queue(20), bursty(60)...), 20, 25},
		{"8 rounds of a queue, then 12 settled", append(queue(8), bursty(12)...), 5, 10},
		{"settled from the first round", bursty(80), 0, 0},
		{"settled, short", bursty(12), 0, 0},
		{"compiling harder later", append(bursty(40), queue(20)...), 0, 0},
		{"three rounds", queue(3), 0, 0},
		// Too short for the rank test: a start swapped in from beside
		// the rounds, as Sermant's service read them.
		{"a swapped-in start's two rounds of bursts, then six settled", []float64{78.3, 88.6, 3.7, 1.0, 7.0, 5.4, 0.4, 0.9}, 2, 2},
		{"one round of a burst, then six settled", []float64{46.5, 2.5, 6.8, 1.3, 0.4, 5.6, 0.7}, 1, 1},
		{"a burst as high as a later one", []float64{46.5, 2.5, 30, 1.3, 0.4, 5.6, 0.7}, 0, 0},
		{"a settled JVM's burst in its first round", []float64{30, 1.5, 0.3, 1.8, 0.9, 1.1, 0.5, 0.2}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := settledFrom(tt.xs); got < tt.from || got > tt.to {
				t.Errorf("settledFrom = %d, want %d to %d", got, tt.from, tt.to)
			}
		})
	}
	// A settled start loses rounds at most once in a hundred, a long
	// one or a short one.
	if cut := startsCut(settledFrom, func(int) []float64 { return bursty(50) }); cut > 4 {
		t.Errorf("%d of 400 settled starts lost rounds, want at most 4", cut)
	}
	if cut := startsCut(settledFrom, func(int) []float64 { return bursty(8) }); cut > 4 {
		t.Errorf("%d of 400 settled starts of 8 rounds lost rounds, want at most 4", cut)
	}
}

// TestSettlingLeavesOutAStartsTransient checks that the leading rounds of a
// JVM's start that compiled what its warm-up left are not counted: an
// identical twin whose second start compiled through its first 12 rounds,
// its CPU per request 30% above, reads no change in CPU per request, and
// the summary says which rounds it left out; the twin's first start, which
// compiled nothing more at first, keeps all its rounds.
func TestSettlingLeavesOutAStartsTransient(t *testing.T) {
	const rounds, starts, queued = 80, 2, 12
	m, trials := twinStarts(t, rounds, starts, compiledThrough(queued))
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := deltaOf(t, s, "twin", CPUPerRequest)
	if d.Significant || d.Pct == nil || *d.Pct > 1 {
		t.Errorf("the twin read %+v, want no change, its estimate within 1%%", d.Reading)
	}
	if len(s.Settling) != 1 {
		t.Fatalf("settling %+v, want the twin's second start alone", s.Settling)
	}
	st := s.Settling[0]
	if st.Variant != "twin" || st.Launch != 1 || len(st.Rounds) < queued || len(st.Rounds) > queued+5 || st.Of != rounds/starts {
		t.Errorf("settling %+v, want the twin's rounds %d to %d of start 2's %d", st, rounds/starts+1, rounds/starts+queued, rounds/starts)
	}
	if st.JITBefore < 30 || st.JITAfter > 2 {
		t.Errorf("compilers' CPU %.1f before, %.1f after, want 40 and 1", st.JITBefore, st.JITAfter)
	}
	// Every trial's window is the same moment here: it counts by the
	// share of its trials counted, not whole because the baseline's were.
	want := 1 - float64(len(st.Rounds))/float64(2*rounds)
	if ms := s.Measured; ms == nil || math.Abs(ms.CountedS-want*ms.WindowS) > 1e-6 {
		t.Errorf("measured %+v, want %.3f of the windows counted", s.Measured, want)
	}
}

// TestSettlingKeepsTheStartsCosts: a start whose leading rounds are left
// out while its JVM compiles still holds its start-up, measured once with
// the start's first round: an agent's start-up cost reads over every start.
func TestSettlingKeepsTheStartsCosts(t *testing.T) {
	const rounds, starts, queued = 90, 3, 12
	m, trials := twinStarts(t, rounds, starts, compiledThrough(queued))
	seen := map[string]bool{}
	for _, tr := range trials {
		key := fmt.Sprint(tr.Variant, tr.Launch)
		if seen[key] {
			continue
		}
		seen[key] = true
		tr.Services[0].Started, tr.Services[0].StartupS = true, 3+0.01*float64(tr.Launch)
		if tr.Variant == "twin" {
			tr.Services[0].StartupS *= 2
		}
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Settling) != 1 || s.Settling[0].Rounds[0] != rounds/starts+1 {
		t.Fatalf("settling %+v, want the twin's second start from its first round", s.Settling)
	}
	d := deltaOf(t, s, "twin", Startup)
	if d.N != starts || d.Pct == nil || math.Abs(*d.Pct-100) > 1 || !d.Significant {
		t.Errorf("the twin's start-up compared %d starts, %+v, want %d starts and +100%%", d.N, d.Reading, starts)
	}
	if n := deltaOf(t, s, "twin", CPUPerRequest).N; n > rounds-queued {
		t.Errorf("the twin's CPU per request compared %d rounds, want its settling rounds left out", n)
	}
}

// TestSettlingInADuet checks that in a duet the baseline's settling rounds
// beside its variant are cut from the comparison and listed once, beside
// that variant, not again as the baseline's rounds as a whole.
func TestSettlingInADuet(t *testing.T) {
	const rounds, queued = 40, 10
	noise := []float64{1.000, 1.004, 0.997, 1.002, 0.999, 1.001, 0.998, 1.003, 1.001, 0.999}
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "twin"}, Restart: "once",
		Starts: 1, Rounds: rounds, Workload: "load", Mode: "duet", Started: time.Unix(999, 0)}
	var trials []*record.Trial
	for r := 1; r <= rounds; r++ {
		for _, v := range m.Variants {
			cpu, jit := 0.001*noise[(r+len(v))%len(noise)], 0.001*noise[(r*3)%len(noise)]
			if v == "baseline" && r <= queued {
				cpu, jit = cpu*1.3, 0.040
			}
			tr := synthetic(t, len(trials)+1, r, v, 4, 100, cpu, 1000)
			if v == "baseline" {
				tr.Pair = "twin"
			}
			// The two sides of a round share its window.
			tr.MeasureStart = time.Unix(1000+10*int64(r), 0)
			tr.MeasureEnd = tr.MeasureStart.Add(8 * time.Second)
			for i := range tr.Samples[0].Points {
				tr.Samples[0].Points[i].JVM = &record.JVMSample{ClassesLoaded: 9000, JITCPU: 1 + jit*float64(i)}
			}
			trials = append(trials, tr)
		}
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Settling) != 1 || s.Settling[0].Variant != "baseline" || s.Settling[0].Pair != "twin" || len(s.Settling[0].Rounds) < queued {
		t.Fatalf("settling %+v, want the baseline beside the twin alone, its first %d rounds", s.Settling, queued)
	}
	if d := deltaOf(t, s, "twin", CPUPerRequest); d.Significant || d.Pct == nil || *d.Pct < -1 {
		t.Errorf("the twin read %+v, want no change, its estimate within 1%%", d.Reading)
	}
	// The twin's trials beside the rounds left out are not counted
	// either: the windows are the pairs'.
	if ms := s.Measured; ms == nil || ms.CountedS > ms.WindowS*(rounds-queued)/rounds+0.5 {
		t.Errorf("measured %+v, want the %d rounds left out not counted", ms, queued)
	}
}

// TestStillMoving checks the cut of a change that settles from above or
// from below: its leading rounds are cut; a steady change of any size, one
// that moves later, and a short start lose none; and a steady change loses
// rounds at most once in a hundred starts.
func TestStillMoving(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	steady := func(n int, level float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = level + 0.01*rng.NormFloat64()
		}
		return xs
	}
	// decaying is a change that falls from level+step to level over its
	// first k rounds, as an agent's code does while the JIT recompiles it.
	decaying := func(n, k int, level, step float64) []float64 {
		xs := steady(n, level)
		for i := range k {
			xs[i] += step * float64(k-i) / float64(k)
		}
		return xs
	}
	tests := []struct {
		name     string
		xs       []float64
		from, to int
	}{
		{"from above over 12 of 40 rounds", decaying(40, 12, 0.18, 0.06), 5, 15},
		{"from below over 12 of 40 rounds", decaying(40, 12, 0.18, -0.06), 5, 15},
		{"steady at +20%", steady(40, 0.18), 0, 0},
		{"steady at 0", steady(40, 0), 0, 0},
		{"moving later", append(steady(30, 0.18), steady(10, 0.25)...), 0, 0},
		{"three rounds", decaying(3, 3, 0.18, 0.06), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stillMoving(tt.xs); got < tt.from || got > tt.to {
				t.Errorf("stillMoving = %d, want %d to %d", got, tt.from, tt.to)
			}
		})
	}
	if cut := startsCut(stillMoving, func(i int) []float64 { return steady(10+i%50, 0.1) }); cut > 4 {
		t.Errorf("%d of 400 steady starts lost rounds, want at most 4", cut)
	}
}

// TestSettlingLeavesOutAChangeStillMoving checks that the leading rounds of
// a start whose code still got faster after its compilers had settled are
// not counted: an identical twin whose second start ran 8% slower at first
// and caught up over 12 rounds, its compilers quiet, reads no change in
// CPU per request without JIT, and the summary says which rounds it left
// out and what the change was over them and after.
func TestSettlingLeavesOutAChangeStillMoving(t *testing.T) {
	const rounds, starts, moving = 80, 2, 12
	m, trials := twinStarts(t, rounds, starts, func(k int) (cpu, jit float64) {
		if k < moving {
			return 1 + 0.08*float64(moving-k)/moving, 0
		}
		return 1, 0
	})
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := deltaOf(t, s, "twin", CPUNoJIT)
	if d.Significant || d.Pct == nil || *d.Pct > 0.5 {
		t.Errorf("the twin read %+v, want no change, its estimate within 0.5%%", d.Reading)
	}
	if len(s.Settling) != 1 {
		t.Fatalf("settling %+v, want the twin's second start alone", s.Settling)
	}
	st := s.Settling[0]
	if st.Variant != "twin" || st.Launch != 1 || st.Cost != CPUNoJIT || len(st.Rounds) < moving/2 || len(st.Rounds) > moving+5 {
		t.Errorf("settling %+v, want the twin's first rounds of start 2, by CPU per request without JIT", st)
	}
	if st.ChangeBefore < 2 || st.ChangeAfter > 0.5 || st.ChangeAfter < -0.5 {
		t.Errorf("change %.1f%% over the rounds left out, %.1f%% after, want about 4%% and 0", st.ChangeBefore, st.ChangeAfter)
	}
}

// twinStarts returns the manifest and trials of a run of a baseline and an
// identical twin, each started starts times for rounds rounds in all,
// their CPU per request 1 ms with a little noise and their compilers
// quiet, except over the twin's second start, whose k-th round (from 0)
// runs at second(k)'s factor of CPU per request, its compilers adding
// second(k)'s ms of CPU a second on top of their own.
func twinStarts(t *testing.T, rounds, starts int, second func(k int) (cpu, jit float64)) (*record.Manifest, []*record.Trial) {
	t.Helper()
	noise := []float64{1.000, 1.004, 0.997, 1.002, 0.999, 1.001, 0.998, 1.003, 1.001, 0.999,
		1.002, 0.998, 1.000, 1.003, 0.997, 1.001, 0.999, 1.002, 0.998, 1.000}
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "twin"}, Restart: "once",
		Starts: starts, Rounds: rounds, Workload: "load", Started: time.Unix(999, 0)}
	var trials []*record.Trial
	for r := 1; r <= rounds; r++ {
		launch := (r - 1) * starts / rounds
		first := (launch * rounds / starts) + 1
		for _, v := range m.Variants {
			cpu, jit := 0.001*noise[(r+len(v))%len(noise)], 0.001*noise[(r*3)%len(noise)]
			if v == "twin" && launch == 1 {
				f, extra := second(r - first)
				cpu, jit = cpu*f, jit+extra/1000
			}
			tr := synthetic(t, len(trials)+1, r, v, 4, 100, cpu, 1000)
			tr.Launch = launch
			for i := range tr.Samples[0].Points {
				tr.Samples[0].Points[i].JVM = &record.JVMSample{ClassesLoaded: 9000, HeapUsed: 64 << 20,
					JITCPU: 1 + jit*float64(i)}
			}
			trials = append(trials, tr)
		}
	}
	return m, trials
}

// compiledThrough is a start's rounds for twinStarts whose compilers
// worked through their queue (40 ms/s, CPU per request 30% above) over its
// first queued rounds, and were quiet after.
func compiledThrough(queued int) func(k int) (cpu, jit float64) {
	return func(k int) (cpu, jit float64) {
		if k < queued {
			return 1.3, 40
		}
		return 1, 0
	}
}

// startsCut returns how many of 400 starts, the i-th start(i), cut loses
// rounds from.
func startsCut(cut func([]float64) int, start func(i int) []float64) int {
	n := 0
	for i := range 400 {
		if cut(start(i)) > 0 {
			n++
		}
	}
	return n
}

// TestRoundsBesideAWarmupStartLeftOut: the rounds with which a warm-up of
// starts ahead began its load (their trials say so) are left out of every
// comparison and listed; without the rule, their trials' doubled CPU per
// request would read a change for the twin.
func TestRoundsBesideAWarmupStartLeftOut(t *testing.T) {
	const rounds = 30
	m, trials := twinStarts(t, rounds, 1, nil)
	beside := []int{4, 11, 19, 26}
	for _, tr := range trials {
		if !slices.Contains(beside, tr.Round) {
			continue
		}
		tr.BesideWarmupStart = true
		if tr.Variant == "twin" {
			for i := range tr.Samples[0].Points {
				tr.Samples[0].Points[i].CPU *= 3
			}
		}
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.WarmupStarts) != 1 || !slices.Equal(s.WarmupStarts[0].Rounds, beside) {
		t.Errorf("warm-up starts %+v, want rounds %v", s.WarmupStarts, beside)
	}
	d := deltaOf(t, s, "twin", CPUPerRequest)
	if d.N != rounds-len(beside) {
		t.Errorf("the twin's CPU per request compared %d rounds, want %d", d.N, rounds-len(beside))
	}
	if d.Significant || d.Pct == nil || *d.Pct > 1 {
		t.Errorf("the twin read %+v, want no change, its estimate within 1%%", d.Reading)
	}
}

// TestCutUnsettled checks that a start whose compilers, over the rounds its
// own series kept, worked well above what another start of the variant
// settled to has its rounds counted only once they fell as low; that a
// variant whose every start compiles alike, or settled ones, lose nothing
// by it; and that a start too short to tell keeps its rounds.
func TestCutUnsettled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	span := func(n int, lo, hi float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = lo + (hi-lo)*rng.Float64()
		}
		return xs
	}
	bursty := func(n int) []float64 {
		xs := span(n, 0, 2)
		for i := range xs {
			if rng.IntN(10) == 0 {
				xs[i] = 30 * rng.Float64()
			}
		}
		return xs
	}
	cutsOf := func(series ...[]float64) map[int]*startCut {
		cuts := map[int]*startCut{}
		for l, xs := range series {
			cuts[l] = &startCut{rounds: make([]int, len(xs)), jit: xs, d: settledFrom(xs), against: -1}
		}
		return cuts
	}
	// A start swapped in late: a queue its series cuts, then rounds still
	// compiling at 12–16 ms/s, then settled ones.
	late := slices.Concat(span(15, 30, 40), span(8, 14, 20), span(7, 0.5, 2))
	tests := []struct {
		name     string
		cuts     map[int]*startCut
		start    int
		from, to int
		against  int
	}{
		{"a late start still compiling", cutsOf(span(50, 0.5, 2), late), 1, 21, 23, 0},
		{"a late start beside a bursty settled one", cutsOf(bursty(50), late), 1, 15, 23, 0},
		{"a late start, too short to tell", cutsOf(bursty(50), span(3, 10, 12)), 1, 0, 0, -1},
		{"every start compiling alike", cutsOf(span(40, 6, 10), span(40, 6, 10)), 1, 0, 0, -1},
		{"a start settled a little higher", cutsOf(span(40, 0.5, 1), span(40, 2, 4.5)), 1, 0, 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cutUnsettled(tt.cuts, DefaultSettledJIT)
			c := tt.cuts[tt.start]
			if c.d < tt.from || c.d > tt.to || c.against != tt.against {
				t.Errorf("cut %d against start %d, want %d to %d against %d", c.d, c.against, tt.from, tt.to, tt.against)
			}
		})
	}
	// Settled starts lose rounds by it at most once in a hundred.
	cut := 0
	for range 400 {
		cuts := cutsOf(bursty(40), bursty(30), bursty(20))
		before := []int{cuts[0].d, cuts[1].d, cuts[2].d}
		cutUnsettled(cuts, DefaultSettledJIT)
		for l, c := range cuts {
			if c.d != before[l] {
				cut++
			}
		}
	}
	if cut > 12 {
		t.Errorf("%d of 1200 settled starts lost rounds to another's, want at most 12", cut)
	}
}
