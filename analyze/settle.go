package analyze

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tollperf/toll/stats"
)

// A JVM that comes to its first rounds with compilation still queued (ten
// JVMs warmed at once on two CPUs, or a start warmed at idle priority
// beside the rounds and swapped in) compiles through its first rounds: its
// CPU per request with the compilers' CPU reads 10–60% above what it
// settles to, for ten to thirty-five rounds. Those rounds are a transient of the
// start, not a draw of its steady state, and averaged in they make each
// start read differently by how many of them it ran. So a start's leading
// rounds are left out of the comparisons while its JVMs' compilers worked
// measurably harder than over the start's later rounds, the truncation of
// an initial transient that simulation output analysis uses.
const (
	// settleBatch is the rounds averaged into one batch when a start has
	// settleBatchFrom rounds or more (MSER-5); fewer are judged round by
	// round.
	settleBatch     = 5
	settleBatchFrom = 20
	// settleMinRounds is the fewest rounds a start needs for its leading
	// ones to be judged at all.
	settleMinRounds = 4
	// settleAlpha is the chance, over all the cuts a start's series was
	// offered, of leaving out rounds of a start that had settled before
	// its first round.
	settleAlpha = 0.01
	// settleBurst and settleOver judge a start too short for the rank
	// test (burstLead): its leading rounds whose compilers' CPU was at
	// least settleBurst ms/s, each at least settleOver times the most of
	// any later round, are its transient. A settled JVM's compilers burst
	// to 30 ms/s now and then; a Spring Boot start swapped in from beside
	// the rounds compiled 46–135 ms/s in its first rounds and under 10
	// after, and with eight rounds a start the rank test cannot tell two
	// such rounds from the rest at settleAlpha.
	settleBurst = 40
	settleOver  = 2
)

// Settling is the leading rounds of one start of one variant's services
// that the comparisons leave out: its JVMs' compilers were still working
// through what its warm-up left them.
type Settling struct {
	Step    int    `json:"step"`
	Variant string `json:"variant"`
	// Pair names the variant a duet's baseline ran beside; empty
	// otherwise.
	Pair string `json:"pair,omitempty"`
	// Launch numbers the start, from 0 (TrialCosts.Launch).
	Launch int `json:"launch"`
	// Rounds are the rounds left out, and Of the start's rounds in all.
	Rounds []int `json:"rounds"`
	Of     int   `json:"of"`
	// JITBefore and JITAfter are the compilers' mean CPU, in ms/s, over
	// the rounds left out and over the start's rounds counted.
	JITBefore float64 `json:"jit_before_ms_per_s"`
	JITAfter  float64 `json:"jit_after_ms_per_s"`
	// Cost is set when the rounds were left out because the variant's
	// change in Cost against the baseline still moved, its compilers
	// quiet (settleChange): ChangeBefore and ChangeAfter are that change,
	// in percent, over the rounds left out and over the start's rounds
	// counted. Empty when the compilers' CPU decided.
	Cost         Cost    `json:"cost,omitempty"`
	ChangeBefore float64 `json:"change_before_pct,omitempty"`
	ChangeAfter  float64 `json:"change_after_pct,omitempty"`
	// AgainstStart is set (from 1) when the rounds were left out because
	// the start's compilers kept working harder than those of that start
	// of the variant, whose rounds counted had AgainstJIT ms/s
	// (cutUnsettled).
	AgainstStart int     `json:"against_start,omitempty"`
	AgainstJIT   float64 `json:"against_jit_ms_per_s,omitempty"`
}

// settledFrom returns how many leading values of xs, one per round of a
// start in order, are its transient: the cut that minimises the marginal
// standard error of the mean of the rest (mserCut), kept only when the
// rounds cut are higher than the rest by a one-sided rank test at
// settleAlpha shared among the cuts offered, or else a lead of bursts no
// settled JVM shows (burstLead). It returns 0 for a start that shows no
// transient.
func settledFrom(xs []float64) int {
	d, cuts := mserCut(xs)
	if d == 0 || rankP(xs[:d], xs[d:]) >= settleAlpha/float64(cuts) {
		return burstLead(xs)
	}
	return d
}

// burstLead returns how many leading values of xs, one per round of a
// start in order, are a burst of compilation no settled JVM shows: each at
// least settleBurst and settleOver times the largest value after them, at
// most half of xs; 0 for none, or for a start too short to judge.
func burstLead(xs []float64) int {
	if len(xs) < settleMinRounds {
		return 0
	}
	d := 0
	for d < len(xs)/2 && xs[d] >= settleBurst {
		d++
	}
	for ; d > 0; d-- {
		if slices.Min(xs[:d]) >= settleOver*slices.Max(xs[d:]) {
			return d
		}
	}
	return 0
}

// stillMoving returns how many leading values of xs, one per round of a
// start in order, are its transient when the series may settle from above
// or from below: mserCut's cut, kept only when the rounds cut differ from
// the rest by a two-sided rank test at settleAlpha shared among the cuts
// offered; 0 when the start shows no transient.
func stillMoving(xs []float64) int {
	d, cuts := mserCut(xs)
	if d == 0 {
		return 0
	}
	if p := 2 * min(rankP(xs[:d], xs[d:]), rankP(xs[d:], xs[:d])); p >= settleAlpha/float64(cuts) {
		return 0
	}
	return d
}

// mserCut returns the cut of xs, one value per round of a start in order,
// that minimises the marginal standard error of the mean of the values
// after it (MSER, White 1997, over batches of settleBatch rounds for a
// start of settleBatchFrom rounds or more), at most half of xs, and how
// many cuts it chose among; 0 and 0 for a start too short to judge.
func mserCut(xs []float64) (d, cuts int) {
	n := len(xs)
	if n < settleMinRounds {
		return 0, 0
	}
	b := 1
	if n >= settleBatchFrom {
		b = settleBatch
	}
	ys := make([]float64, n/b)
	for i := range ys {
		ys[i] = stats.Mean(xs[i*b : (i+1)*b])
	}
	cuts = len(ys) / 2
	best, bestStat := 0, math.Inf(1)
	for c := 0; c <= cuts; c++ {
		rest := ys[c:]
		m := stats.Mean(rest)
		var ss float64
		for _, y := range rest {
			ss += (y - m) * (y - m)
		}
		k := float64(len(rest))
		if stat := ss / (k * k); stat < bestStat {
			best, bestStat = c, stat
		}
	}
	return best * b, cuts
}

// rankP returns the one-sided p-value that the values of a are higher
// than those of b: the Mann–Whitney U test, by its normal approximation
// with a correction for ties and for continuity.
func rankP(a, b []float64) float64 {
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	n1, n2, n := float64(len(a)), float64(len(b)), float64(len(all))
	var r1, ties float64
	for i := 0; i < len(all); {
		j := i
		for j+1 < len(all) && all[j+1].v == all[i].v {
			j++
		}
		rank := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		t := float64(j - i + 1)
		ties += t*t*t - t
		i = j + 1
	}
	u := r1 - n1*(n1+1)/2
	sd := math.Sqrt(n1 * n2 / 12 * (n + 1 - ties/(n*(n-1))))
	if sd == 0 {
		return 1
	}
	z := (u - n1*n2/2 - 0.5) / sd
	return math.Erfc(z/math.Sqrt2) / 2
}

// settle leaves out of the comparisons each start's leading rounds whose
// JVMs still compiled what their warm-up left them (settledFrom on the
// compilers' CPU of the rounds of each start, for each variant, and for a
// duet's baseline beside each variant), then the leading rounds over which
// a variant's change against the baseline still moved (settleChange), and
// lists them in the summary. It judges only JVMs started once for many
// rounds (restart: once): a service started afresh every round has no
// start to settle across rounds.
func (z *summarizer) settle() {
	z.leaveOutWarmupStarts()
	if z.starts == 0 {
		return
	}
	keys := slices.SortedFunc(maps.Keys(z.byKey), func(a, b stepVariant) int {
		return cmp.Or(cmp.Compare(a.step, b.step), strings.Compare(a.variant, b.variant))
	})
	duets := map[int]bool{} // load steps whose baseline ran in duets
	for _, k := range keys {
		if _, _, ok := splitPairKey(k.variant); ok {
			duets[k.step] = true
		}
	}
	below := DefaultSettledJIT
	if u := z.m.Load.VariantWarmupUntil; u != nil && u.JITBelowMs > 0 {
		below = u.JITBelowMs
	}
	for _, k := range keys {
		rounds := z.byKey[k]
		cuts := map[int]*startCut{}
		for l, rs := range roundsByLaunch(rounds, func(int) bool { return true }) {
			jit := make([]float64, 0, len(rs))
			for _, r := range rs {
				v, ok := rounds[r].Costs[JITCPU]
				if !ok {
					break
				}
				jit = append(jit, v)
			}
			if len(jit) == len(rs) {
				cuts[l] = &startCut{rounds: rs, jit: jit, d: settledFrom(jit), against: -1}
			}
		}
		cutUnsettled(cuts, below)
		for _, l := range slices.Sorted(maps.Keys(cuts)) {
			c := cuts[l]
			rs, jit, d := c.rounds, c.jit, c.d
			if d == 0 {
				continue
			}
			variant, pair, _ := splitPairKey(k.variant)
			// In a duet the baseline's rounds beside each variant are
			// listed; its rounds as a whole, which only its own figures
			// read, are cut alike and not listed again.
			if pair != "" || !duets[k.step] || variant != z.m.Baseline {
				st := Settling{Step: k.step, Variant: variant, Pair: pair, Launch: l,
					Rounds: slices.Clone(rs[:d]), Of: len(rs), JITBefore: stats.Mean(jit[:d]), JITAfter: stats.Mean(jit[d:])}
				if c.against >= 0 {
					st.AgainstStart, st.AgainstJIT = c.against+1, c.floor
				}
				z.s.Settling = append(z.s.Settling, st)
			}
			for _, r := range rs[:d] {
				rounds[r].Settling = true
				z.leaveOut(k, r)
			}
		}
	}
	z.settleChange()
	slices.SortStableFunc(z.s.Settling, func(a, b Settling) int {
		return cmp.Or(cmp.Compare(a.Step, b.Step), cmp.Compare(a.Launch, b.Launch))
	})
}

// DefaultSettledJIT is the compilers' CPU, in ms/s, below which a JVM's
// compilation counts as settled when the run's warm-up names no rate of
// its own: the rate of the warm-up toll chooses.
const DefaultSettledJIT = 5.0

// startCut is one start's rounds of one variant, in order, their
// compilers' CPU, and how many of them lead the start's transient (d);
// against and floor are set when another start decided it (cutUnsettled),
// against −1 otherwise.
type startCut struct {
	rounds  []int
	jit     []float64
	d       int
	against int
	floor   float64
}

// cutUnsettled extends the cut of each start whose compilers, over its
// rounds counted, worked harder than below ms/s, more than settleOver
// times as hard as those of the variant's start that settled lowest, and
// harder by a one-sided rank test at settleAlpha: it
// had not settled as that start did, but ran out of rounds before its
// own series could show it (a start swapped in still compiling, late in
// a run). Such a start's rounds count from the first after which its
// compilers' CPU fell to that limit and no longer read higher by that
// test, at least settleMinRounds of them; a start whose rounds never fell
// so stays as its series cut it,
// too short to tell where it would settle. The Java agents' third start,
// swapped in at round 97 of 127, compiled 11–16 ms/s over the rounds the
// series kept, where the first start's settled to 1.2–1.9, and read
// elastic's change with the compilers' CPU ±26.9% about +50%; without
// those rounds, ±14% about +44%.
func cutUnsettled(cuts map[int]*startCut, below float64) {
	floorAt, floor := -1, math.Inf(1)
	for _, l := range slices.Sorted(maps.Keys(cuts)) {
		c := cuts[l]
		if len(c.jit)-c.d < settleMinRounds {
			continue
		}
		if m := stats.Mean(c.jit[c.d:]); m < floor {
			floorAt, floor = l, m
		}
	}
	if floorAt < 0 {
		return
	}
	limit := max(below, settleOver*floor)
	settled := cuts[floorAt].jit[cuts[floorAt].d:]
	for l, c := range cuts {
		if l == floorAt {
			continue
		}
		if rest := c.jit[c.d:]; stats.Mean(rest) <= limit || rankP(rest, settled) >= settleAlpha {
			continue
		}
		d := c.d
		for ; d <= len(c.jit)-settleMinRounds; d++ {
			if rest := c.jit[d:]; stats.Mean(rest) <= limit && rankP(rest, settled) >= settleAlpha {
				break
			}
		}
		if d > len(c.jit)-settleMinRounds {
			continue // too few rounds to tell where it would settle
		}
		if d > c.d {
			c.d, c.against, c.floor = d, floorAt, floor
		}
	}
}

// StepRounds are rounds of one load step.
type StepRounds struct {
	Step   int   `json:"step"`
	Rounds []int `json:"rounds"`
}

// leaveOutWarmupStarts leaves out of the comparisons, and lists, every
// round with which a warm-up of starts ahead of their turn began its load
// beside one-at-a-time rounds (a trial of the round says so:
// BesideWarmupStart). A round is a block whose trials compare under the
// same conditions, and that warm-up's first seconds (a JVM's first
// requests, its compilers' first bursts) fall on the round's first trial
// more than on its others: EaseAgent's mean latency read 2.6–2.8 times
// apart between the two trials of such rounds, 1.0–1.5 times in the
// others.
func (z *summarizer) leaveOutWarmupStarts() {
	marked := map[int]map[int]bool{} // step → rounds
	for k, rounds := range z.byKey {
		for r, tc := range rounds {
			if !tc.BesideWarmupStart {
				continue
			}
			if marked[k.step] == nil {
				marked[k.step] = map[int]bool{}
			}
			marked[k.step][r] = true
		}
	}
	for _, step := range slices.Sorted(maps.Keys(marked)) {
		rs := slices.Sorted(maps.Keys(marked[step]))
		z.s.WarmupStarts = append(z.s.WarmupStarts, StepRounds{Step: step, Rounds: rs})
		for k, rounds := range z.byKey {
			if k.step != step {
				continue
			}
			for _, r := range rs {
				delete(rounds, r)
			}
		}
	}
}

// settleChange leaves out, for each variant and each start of its
// services, the leading rounds over which its change against the baseline
// in CPU per request without the compilers' CPU (CPU per request where
// that is not measured) still moved once its compilers had settled
// (stillMoving on the change's log ratios, round by round): code that the
// JIT compiled and that got faster as the JIT recompiled it with what it
// had learnt, an agent's caches filling. Those rounds measure the start
// on its way to its steady state, not in it.
func (z *summarizer) settleChange() {
	steps := slices.Sorted(maps.Keys(z.steps))
	for _, si := range steps {
		for _, v := range z.m.Variants {
			if v == z.m.Baseline {
				continue
			}
			rounds, base := z.byKey[stepVariant{si, v}], z.baseOf(si, v)
			if len(rounds) == 0 || len(base) == 0 {
				continue
			}
			for _, c := range []Cost{CPUNoJIT, CPUPerRequest} {
				paired := roundsByLaunch(rounds, func(r int) bool {
					b, ok := base[r]
					return ok && rounds[r].Costs[c] > 0 && b.Costs[c] > 0
				})
				if len(paired) > 0 {
					z.settleChangeOf(si, v, c, rounds, base, paired)
					break
				}
			}
		}
	}
}

// roundsByLaunch returns the rounds of rounds that keep holds, in order,
// by the start they ran under.
func roundsByLaunch(rounds map[int]*TrialCosts, keep func(r int) bool) map[int][]int {
	by := map[int][]int{}
	for _, r := range slices.Sorted(maps.Keys(rounds)) {
		if keep(r) {
			by[rounds[r].Launch] = append(by[rounds[r].Launch], r)
		}
	}
	return by
}

// settleChangeOf leaves out of variant v's rounds at step si, start by
// start (byLaunch: the rounds paired with base in cost c), those over
// which its change in c against base still moved (settleChange), and
// lists them.
func (z *summarizer) settleChangeOf(si int, v string, c Cost, rounds, base map[int]*TrialCosts, byLaunch map[int][]int) {
	for _, l := range slices.Sorted(maps.Keys(byLaunch)) {
		rs := byLaunch[l]
		xs := make([]float64, len(rs))
		jit := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = math.Log(rounds[r].Costs[c] / base[r].Costs[c])
			jit[i] = rounds[r].Costs[JITCPU]
		}
		d := stillMoving(xs)
		if d == 0 {
			continue
		}
		pct := func(ys []float64) float64 { return 100 * math.Expm1(stats.Mean(ys)) }
		z.s.Settling = append(z.s.Settling, Settling{Step: si, Variant: v, Launch: l, Rounds: slices.Clone(rs[:d]), Of: len(rs),
			JITBefore: stats.Mean(jit[:d]), JITAfter: stats.Mean(jit[d:]),
			Cost: c, ChangeBefore: pct(xs[:d]), ChangeAfter: pct(xs[d:])})
		for _, r := range rs[:d] {
			rounds[r].Settling = true
			z.leaveOut(stepVariant{si, v}, r)
		}
	}
}
