package analyze

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/stats"
)

// Defaults of a run in precision mode: the rounds and starts every run
// takes before the stopping rule may stop it, so that an interval is never
// read from a spread of two or three values, and a JVM's start-to-start term
// is estimated from more than one start.
const (
	DefaultMinRounds = 5
	DefaultMinStarts = 2
	// maxMoreStarts bounds the starts an estimate considers.
	maxMoreStarts = 30
	// maxRounds bounds the rounds an estimate considers.
	maxRounds = 100000
	// OutOfReach is how many budgets an estimate may take before Decide
	// calls the target out of reach (MoreRounds −1): an estimate that far
	// extrapolates a spread measured in far fewer rounds, and says only
	// that this design will not reach the target.
	OutOfReach = 10
	// MaxStartShare is the most of a budget that starts (stopping,
	// starting and warming the services) may take when a run aims at the
	// narrowest interval its budget holds rather than at a target it can
	// reach: past it, each start's warm-up measures nothing while its
	// share of the start-to-start term shrinks slowly (as 1/starts), and
	// the budget goes to the rounds, which narrow every other cost too.
	MaxStartShare = 0.2
)

// Target is the precision asked of one primary cost: the half-width, in
// percent, of its 95% interval of every variant's change.
type Target struct {
	Cost Cost    `json:"cost"`
	Pct  float64 `json:"pct"`
}

// Goal is what a run in precision mode asks: each target met by every
// variant's change, within the budget, after at least MinRounds rounds and,
// for JVMs started once, MinStarts starts.
type Goal struct {
	Targets   []Target
	MinRounds int
	MinStarts int
	Budget    time.Duration
}

// PairedSeries is one primary cost of one variant at one load step: the log
// ratios of its paired rounds (variant over baseline), each run under the
// start of the services in Launches (nil when they were not started once).
type PairedSeries struct {
	Variant   string
	Step      int
	Cost      Cost
	LogRatios []float64
	Launches  []int
}

// Progress is where a run stands when the stopping rule is asked.
type Progress struct {
	// Rounds is the number of rounds finished.
	Rounds int
	// Starts is the number of starts of JVMs started once (restart: once)
	// so far, the one the analysis divides the start-to-start term among;
	// 0 when the services carry no such term.
	Starts int
	// RoundsThisStart is the rounds finished under the current start.
	RoundsThisStart int
	// Elapsed is the run's time so far.
	Elapsed time.Duration
	// RoundTime is what one more round takes (Elapsed/Rounds when 0).
	RoundTime time.Duration
	// StartTime is what a new start of the services takes beyond its
	// rounds: stopping, starting and warming them. A new start is asked
	// for only when it and two rounds fit in the budget.
	StartTime time.Duration
	// ReadyStarts is how many further starts of every variant wait warmed
	// already (started ahead of their turn), and SwapTime what one of
	// them takes to replace the current start: stopping it. The next
	// ReadyStarts new starts cost SwapTime each, not StartTime.
	ReadyStarts int
	SwapTime    time.Duration
	// WarmingStarts is how many further starts of every variant are
	// warming beside the rounds, not ready yet. They are priced as ready
	// ones, and a new start waits for them while the rounds go on under
	// the current start (awaitWarming): the start then costs a stop, not
	// a warm-up.
	WarmingStarts int
	// WarmAhead is set when every further start the run plans is started
	// and warmed beside the rounds, as the ready and warming ones were:
	// each costs SwapTime, not StartTime, and the warm-ups of the starts
	// so far are spent, not a share of the budget that starts may take.
	WarmAhead bool
	// WarmBeside is what the latest starts warmed beside the rounds took
	// from their launch until warmed (0 before any): a further start
	// planned there must be warmed, swapped in, settled and run two
	// rounds counted within the budget (usableAhead).
	WarmBeside time.Duration
	// SettleRounds is how many leading rounds a start of this step has
	// taken to settle (SettleRounds): a new start's first rounds are not
	// counted either, and so cost it their time.
	SettleRounds int
	// RunLeft is what is left of the whole run's budget, for this step
	// and the others, and Later is set when other load steps can use what
	// this one leaves: those after it, and those before it that spent
	// their share short of their targets and are taken up again at the
	// end. A step whose target is out of reach in RunLeft cedes its share
	// to them (Ceded). Zero RunLeft never cedes.
	RunLeft time.Duration
	Later   bool
	// Calibration is the run's (its manifest's): the run-level and
	// start-to-start terms the intervals carry. A zero value stands for
	// record.DefaultCalibration.
	Calibration record.Calibration
}

// calibration returns p's calibration, or toll's default when p names none.
func (p Progress) calibration() record.Calibration {
	if p.Calibration.RunNoisePct == 0 && len(p.Calibration.JVMStartNoisePct) == 0 {
		return record.DefaultCalibration()
	}
	return p.Calibration
}

// roundTime returns what one more round takes: RoundTime, or the rounds'
// mean so far when it is not set.
func (p Progress) roundTime() time.Duration {
	if p.RoundTime <= 0 && p.Rounds > 0 {
		return p.Elapsed / time.Duration(p.Rounds)
	}
	return p.RoundTime
}

// startsCost returns what n more starts take: the first ReadyStarts and
// WarmingStarts of them (every one with WarmAhead) SwapTime each, the rest
// StartTime each, and each its SettleRounds rounds.
func (p Progress) startsCost(n int) time.Duration {
	n = max(n, 0)
	ready := min(n, max(p.ReadyStarts, 0)+max(p.WarmingStarts, 0))
	if p.WarmAhead {
		ready = n
	}
	settle := time.Duration(n*max(p.SettleRounds, 0)) * p.roundTime()
	return time.Duration(ready)*p.SwapTime + time.Duration(n-ready)*p.StartTime + settle
}

// awaitWarming reports whether a new start due now waits for the starts
// warming beside the rounds: one is warming and none is ready. The rounds
// go on under the current start meanwhile, as long as they must: a start
// taken before its warm-up ends is waited for with nothing measured (a
// JVM's spare, warmed on the CPU the rounds leave, can take minutes more),
// and a round under the current start narrows the interval where waiting
// does not. Only a run short of its least starts takes the start before
// it is ready, once the budget holds no more than one more round under the
// current start, the start, and two rounds after it.
func (p Progress) awaitWarming(g Goal, minStarts int, roundTime time.Duration) bool {
	if p.WarmingStarts <= 0 || p.ReadyStarts > 0 {
		return false
	}
	if p.Starts >= minStarts {
		return true
	}
	return p.roomBeside(g, roundTime)
}

// roomBeside reports whether g's budget holds three more rounds and a
// start's swap or warm-up: room for a start warming beside the rounds.
func (p Progress) roomBeside(g Goal, roundTime time.Duration) bool {
	return g.Budget <= 0 || p.Elapsed+3*roundTime+p.startsCost(1) <= g.Budget
}

// warmFirst reports whether a new start, where every start the run plans
// warms beside the rounds (WarmAhead), is to begin warming there before
// it is taken: none is ready or warming (the run planned none ahead until
// now), and the budget holds a few more rounds beside it. Taken now, it
// would warm before its rounds with nothing measured (EaseAgent's third
// start, due while the rule planned no further start, warmed so for 79 s).
func (p Progress) warmFirst(g Goal, roundTime time.Duration) bool {
	if !p.WarmAhead || p.ReadyStarts > 0 || p.WarmingStarts > 0 {
		return false
	}
	return p.roomBeside(g, roundTime)
}

// usableAhead caps planned, the further starts a run whose starts warm
// beside the rounds (WarmAhead) plans, at the ready and warming ones when
// a start that begins to warm now (for WarmBeside, or StartTime before
// any) could not be swapped in, settle and run two rounds counted within
// g's budget. A start warmed for nothing keeps the CPUs busy beside the
// last rounds: the Java agents' ten spare JVMs warmed through the last
// start's 30 rounds, every CPU 100% busy, and never took their turn. The
// cap is asked again at each start, so starts warmed one after another
// are each judged when they would begin.
func (p Progress) usableAhead(g Goal, planned int, roundTime time.Duration) int {
	have := max(p.ReadyStarts, 0) + max(p.WarmingStarts, 0)
	if !p.WarmAhead || g.Budget <= 0 || p.Starts == 0 || planned <= have {
		return planned
	}
	warm := p.WarmBeside
	if warm <= 0 {
		warm = p.StartTime
	}
	after := p.SwapTime + time.Duration(max(p.SettleRounds, 0)+2)*roundTime
	if p.Elapsed+warm+after > g.Budget {
		return have
	}
	return planned
}

// minimums returns the rounds (at least two, for an interval) and starts
// (none where the services carry no start-to-start term) a step runs
// before g's stopping rule may stop it.
func (g Goal) minimums(p Progress) (rounds, starts int) {
	if p.Starts > 0 {
		starts = g.MinStarts
	}
	return max(g.MinRounds, 2), starts
}

// StopReason says why a run in precision mode stopped, or that it goes on.
type StopReason string

// The stopping rule's answers.
const (
	Continue    StopReason = "continue"
	Reached     StopReason = "reached"
	BudgetSpent StopReason = "budget"
	// Ceded: the step's target is out of reach in what is left of the
	// whole run's budget, and other load steps may reach theirs: it
	// stops at its minimum and leaves them its share.
	Ceded StopReason = "ceded"
	// Idle: an idle load step (rate 0) ran its minimum rounds and starts.
	// It has no request for a per-request target to aim at; its rounds
	// measure what the variants cost without load (a cost curve's fixed
	// part).
	Idle StopReason = "idle"
)

// Width is one series' interval against its target.
type Width struct {
	Variant string `json:"variant"`
	Step    int    `json:"step"`
	Cost    Cost   `json:"cost"`
	// HalfPct is the 95% interval's half-width in percent, as the report
	// computes it, when HasCI (two rounds or more).
	HalfPct   float64 `json:"half_pct"`
	HasCI     bool    `json:"has_ci"`
	TargetPct float64 `json:"target_pct"`
	Reached   bool    `json:"reached"`
	// MoreRounds and MoreStarts are the further rounds and starts estimated
	// to reach the target at the least time (MoreRounds −1: not within the
	// bounds the estimate considers).
	MoreRounds int `json:"more_rounds"`
	MoreStarts int `json:"more_starts"`
	// FitStarts is, for JVMs started once under a budget, the further
	// starts that leave the narrowest interval when the rounds the budget
	// still holds are spread over them: what a run aims at when the
	// estimate does not fit in its budget. The starts it counts take
	// at most MaxStartShare of the budget in all (with WarmAhead, the
	// further ones alone: the warm-ups so far ran beside the rounds).
	FitStarts int `json:"fit_starts"`
	// StartHalfPct is the part of HalfPct that what differs between
	// starts holds, for JVMs started once: the half-width that term alone
	// gives at the starts so far, which no number of rounds narrows.
	StartHalfPct float64 `json:"start_half_pct,omitempty"`
}

// Decision is the stopping rule's answer after a round.
type Decision struct {
	Reason StopReason `json:"reason"`
	Widths []Width    `json:"widths"`
	// Worst indexes the width furthest from its target (−1: none).
	Worst int `json:"worst"`
	// MoreRounds, MoreStarts and MoreTime estimate what would bring every
	// series to its target: the most any series needs; MoreRounds is −1
	// when some series is not within the bounds the estimate considers or
	// would take more than OutOfReach budgets.
	MoreRounds int           `json:"more_rounds"`
	MoreStarts int           `json:"more_starts"`
	MoreTime   time.Duration `json:"more_time_ns"`
	// NewStart is set when the start-to-start term dominates the width:
	// the next round should run under a new start of the services.
	NewStart bool `json:"new_start"`
	// Planned is the further starts the run plans now, a new start this
	// decision asks for included (0 when its services carry no
	// start-to-start term): what a backend may start and warm at once.
	Planned int `json:"planned"`
}

// Held returns, in order, the costs whose target every series of d meets.
func (d Decision) Held() []Cost {
	met := map[Cost]bool{}
	for _, w := range d.Widths {
		if ok, seen := met[w.Cost]; !seen || ok {
			met[w.Cost] = w.Reached
		}
	}
	var out []Cost
	for _, c := range slices.Sorted(maps.Keys(met)) {
		if met[c] {
			out = append(out, c)
		}
	}
	return out
}

// Decide is the stopping rule of a run in precision mode. It computes each
// series' 95% half-width exactly as Compare does (a t interval of the log
// ratios, widened by the run's fixed terms: sideFixedLog), and stops when
// every series is within its target after the minimum rounds and starts
// (Reached), or when one more round would pass the budget (BudgetSpent).
// It reads the widths only, never whether an interval excludes zero: a
// rule that stopped on a verdict would stop on the rounds that happen to
// look significant, and inflate false positives.
func Decide(g Goal, series []PairedSeries, p Progress) Decision {
	minRounds, minStarts := g.minimums(p)
	roundTime := p.roundTime()
	d := Decision{Reason: Continue, Worst: -1}
	all := len(series) > 0
	worst := 0.0
	perStart := 0
	for _, s := range series {
		target := targetOf(g, s.Cost)
		if target <= 0 {
			continue
		}
		w := widthOf(s, target, p, minRounds, minStarts, g.Budget)
		d.Widths = append(d.Widths, w)
		if !w.Reached {
			all = false
		}
		r := math.Inf(1)
		if w.HasCI {
			r = w.HalfPct / target
		}
		if d.Worst < 0 || r > worst {
			d.Worst, worst = len(d.Widths)-1, r
		}
		if w.MoreRounds < 0 {
			d.MoreRounds = -1
		} else if d.MoreRounds >= 0 {
			d.MoreRounds = max(d.MoreRounds, w.MoreRounds)
		}
		d.MoreStarts = max(d.MoreStarts, w.MoreStarts)
		if w.MoreStarts > 0 && w.MoreRounds >= 0 {
			n := p.Rounds + w.MoreRounds
			perStart = max(perStart, (n+p.Starts+w.MoreStarts-1)/(p.Starts+w.MoreStarts))
		}
	}
	if len(d.Widths) == 0 {
		all = false
	}
	if d.MoreRounds >= 0 {
		d.MoreTime = time.Duration(d.MoreRounds)*roundTime + p.startsCost(d.MoreStarts)
		if g.Budget > 0 && d.MoreTime > OutOfReach*g.Budget {
			d.MoreRounds, d.MoreTime = -1, 0
		}
	}
	// The starts still to come: the estimate's when it fits in the
	// budget, or else those that narrow the widest interval most within it.
	planned := d.MoreStarts
	overBudget := g.Budget > 0 && (d.MoreRounds < 0 || p.Elapsed+d.MoreTime > g.Budget) && d.Worst >= 0
	if overBudget {
		planned = d.Widths[d.Worst].FitStarts
		// Unless some targets the budget can still reach: those come
		// first, so that a series no design within the budget reaches
		// (a JVM's CPU with its compilers' bursts) does not take from
		// another (the same CPU without them) the starts it needs.
		// When none can, the run aims at the nearest target: the starts
		// that narrow its interval most within the budget.
		if more, share, ok := reachable(d.Widths, p, roundTime, g.Budget); ok {
			planned, perStart, overBudget = more, share, false
		} else if i := nearest(d.Widths, p, roundTime); i >= 0 {
			planned = d.Widths[i].FitStarts
		}
	}
	planned = max(p.usableAhead(g, planned, roundTime), minStarts-p.Starts)
	if p.Starts > 0 {
		d.Planned = planned
	}
	enough := p.Rounds >= minRounds && p.Starts >= minStarts
	switch {
	case enough && all:
		d.Reason = Reached
	case g.Budget > 0 && p.Elapsed+roundTime > g.Budget:
		d.Reason = BudgetSpent
	case enough && p.Later && p.RunLeft > 0 && d.Worst >= 0 && (d.MoreRounds < 0 || d.MoreTime > p.RunLeft):
		// Out of reach even with the whole run's budget: the steps after
		// this one get what it would have spent in vain.
		d.Reason = Ceded
	}
	// A new start when more are needed and this one has had its share of
	// the rounds, or to reach the minimum number of starts.
	// Never a start whose warm-up and first two rounds the budget cannot
	// hold: its rounds would not count for more than those of this start.
	if p.Starts > 0 && d.Reason == Continue {
		share := max(perStart, minRounds/max(minStarts, 1), 2)
		// Over budget, the starts that fit share its rounds evenly.
		switch fit := budgetShare(g.Budget, p, roundTime, planned); {
		case fit > 0 && overBudget:
			share = max(fit, 2)
		case fit > 0:
			share = max(min(share, fit), 2)
		}
		fits := g.Budget <= 0 || p.Elapsed+p.startsCost(1)+2*roundTime <= g.Budget
		if p.RoundsThisStart >= share && planned > 0 && fits && !p.awaitWarming(g, minStarts, roundTime) && !p.warmFirst(g, roundTime) {
			d.NewStart = true
		}
	}
	return d
}

// DecideIdle is the stopping rule of an idle load step: it stops once the
// step has run the goal's minimum rounds over its minimum starts (Idle),
// or when one more round would pass the budget, and asks for a new start
// when the current one has had its share of the minimum rounds.
func DecideIdle(g Goal, p Progress) Decision {
	minRounds, minStarts := g.minimums(p)
	roundTime := p.roundTime()
	d := Decision{Reason: Continue, Worst: -1}
	switch {
	case p.Rounds >= minRounds && p.Starts >= minStarts:
		d.Reason = Idle
	case g.Budget > 0 && p.Elapsed+roundTime > g.Budget:
		d.Reason = BudgetSpent
	case p.Starts > 0 && p.Starts < minStarts && p.RoundsThisStart >= max(minRounds/minStarts, 2):
		d.NewStart, d.Planned = true, minStarts-p.Starts
	}
	return d
}

// StepIdle reports whether load step step of sum is idle (rate 0).
func StepIdle(sum *Summary, step int) bool {
	for _, st := range sum.Steps {
		if st.Index == step {
			return st.Idle
		}
	}
	return false
}

// reachable returns, when some series have not reached their targets and
// the budget still holds what each of them needs on its own estimate, the
// starts those series need in all and the rounds each start should get
// for them, with ok; ok is false when no series, or every unreached one,
// can reach its target within the budget (the caller's plan stands then).
func reachable(ws []Width, p Progress, roundTime, budget time.Duration) (starts, perStart int, ok bool) {
	unreached := 0
	for _, w := range ws {
		if w.Reached {
			continue
		}
		unreached++
		if w.MoreRounds < 0 || p.Elapsed+time.Duration(w.MoreRounds)*roundTime+p.startsCost(w.MoreStarts) > budget {
			continue
		}
		ok = true
		starts = max(starts, w.MoreStarts)
		if w.MoreStarts > 0 {
			n := p.Rounds + w.MoreRounds
			perStart = max(perStart, (n+p.Starts+w.MoreStarts-1)/(p.Starts+w.MoreStarts))
		}
	}
	if !ok || unreached == 0 {
		return 0, 0, false
	}
	return starts, perStart, true
}

// nearest returns the index of the unreached series whose own estimate
// reaches its target soonest, or −1 when none has an estimate.
func nearest(ws []Width, p Progress, roundTime time.Duration) int {
	best, at := time.Duration(math.MaxInt64), -1
	for i, w := range ws {
		if w.Reached || w.MoreRounds < 0 {
			continue
		}
		if t := time.Duration(w.MoreRounds)*roundTime + p.startsCost(w.MoreStarts); t < best {
			best, at = t, i
		}
	}
	return at
}

// budgetShare returns the rounds each start gets when what is left of
// budget is spread over the starts so far and up to more starts still to
// come (as many of them as the budget holds, with two rounds each), or 0
// when no start is to come or nothing bounds the run. A start then waits
// for its share of the rounds the budget will run, not for its share of
// an estimate the budget cannot hold: otherwise a run whose estimate asks
// for 300 rounds over 3 starts spends its whole budget under the first.
func budgetShare(budget time.Duration, p Progress, roundTime time.Duration, more int) int {
	if budget <= 0 || roundTime <= 0 {
		return 0
	}
	for ; more > 0; more-- {
		left := budget - p.Elapsed - p.startsCost(more)
		if left >= time.Duration(2*more)*roundTime {
			return (p.Rounds + int(left/roundTime)) / (p.Starts + more)
		}
	}
	return 0
}

// targetOf returns g's target for cost c, 0 when it has none.
func targetOf(g Goal, c Cost) float64 {
	for _, t := range g.Targets {
		if t.Cost == c {
			return t.Pct
		}
	}
	return 0
}

// widthOf measures one series against its target and estimates what would
// reach it.
func widthOf(s PairedSeries, target float64, p Progress, minRounds, minStarts int, budget time.Duration) Width {
	w := Width{Variant: s.Variant, Step: s.Step, Cost: s.Cost, TargetPct: target}
	xs := s.LogRatios
	cal := p.calibration()
	fixed, _ := sideFixedLog(cal, s.Cost, p.Starts, xs, s.Launches)
	iv := stats.TInterval(xs).Widened(2 * fixed)
	if iv.HasCI {
		lo, hi := 100*math.Expm1(iv.Low), 100*math.Expm1(iv.High)
		w.HalfPct, w.HasCI = (hi-lo)/2, true
	}
	w.Reached = w.HasCI && w.HalfPct <= target
	if p.Starts > 0 && iv.HasCI {
		// The start term's share of the fixed terms, at the interval's
		// quantile: what rounds alone would leave of the half-width.
		j := max(fixed-fixedVariance(cal, s.Cost, 0), 0)
		w.StartHalfPct = 100 * math.Expm1(stats.TQuantile(float64(len(xs)-1))*math.Sqrt(2*j))
	}
	n := len(xs)
	if n < 2 {
		// No spread yet: the minimum rounds come first.
		w.MoreRounds = max(minRounds-n, 0)
		w.MoreStarts = max(minStarts-p.Starts, 0)
		return w
	}
	// The half-width of a change of mean m in percent is
	// e^m·sinh(q·se); the target holds while q·se ≤ asinh(T/e^m).
	limit := math.Asinh(target / 100 / math.Exp(iv.Mean))
	sd2 := iv.StdDev * iv.StdDev
	// The run-level term, and what the starts so far hold fixed beyond
	// it, which more starts divide (fixed = r² + J/k, k the starts the
	// rounds' mean averages so far; each new start adds one to it).
	r2 := fixedVariance(cal, s.Cost, 0)
	k := startCount(p.Starts, s.Launches)
	var jTotal float64
	if p.Starts > 0 {
		jTotal = max(fixed-r2, 0) * k
	}
	best := time.Duration(math.MaxInt64)
	w.MoreRounds = -1
	roundTime := max(p.RoundTime, time.Nanosecond)
	for extra := 0; extra <= maxMoreStarts; extra++ {
		if p.Starts == 0 && extra > 0 {
			break
		}
		starts := p.Starts + extra
		if starts < minStarts {
			continue
		}
		f := r2
		if starts > 0 {
			f += jTotal / (k + float64(extra))
		}
		// The least rounds, at least two per new start, within the target.
		nMin := max(n, minRounds, n+2*extra)
		if q := stats.TQuantileN(maxRounds); q*math.Sqrt(2*f) >= limit {
			continue // rounds alone cannot reach it at these starts
		}
		need := stats.RoundsFor(sd2, 2*f, limit, nMin, maxRounds)
		if need < 0 {
			continue
		}
		cost := time.Duration(need-n)*roundTime + p.startsCost(extra)
		if cost < best {
			best, w.MoreRounds, w.MoreStarts = cost, need-n, extra
		}
	}
	if w.Reached && n >= minRounds && p.Starts >= minStarts {
		w.MoreRounds, w.MoreStarts = 0, 0
	}
	if budget > 0 && p.Starts > 0 {
		// The variance of the change's mean is sd²/n + 2·(r² + J/k).
		left := budget - p.Elapsed
		least := math.Inf(1)
		most := time.Duration(MaxStartShare * float64(budget))
		spent := time.Duration(p.Starts) * p.StartTime
		if p.WarmAhead {
			spent = 0
		}
		for extra := 0; extra <= maxMoreStarts; extra++ {
			more := int((left - p.startsCost(extra)) / roundTime)
			if extra > 0 && (more < 2*extra || spent+p.startsCost(extra) > most) {
				break
			}
			v := sd2/float64(n+max(more, 0)) + 2*(r2+jTotal/(k+float64(extra)))
			if v < least {
				least, w.FitStarts = v, extra
			}
		}
	}
	return w
}

// PrecisionSeries returns, for the stopping rule, the paired series of
// every variant's change at step index step of sum in each targeted cost:
// the log ratios of its rounds, as the report's intervals read them.
func PrecisionSeries(sum *Summary, step int, targets []Target) []PairedSeries {
	var out []PairedSeries
	for _, st := range sum.Steps {
		if st.Index != step {
			continue
		}
		for _, v := range st.Variants {
			for _, t := range targets {
				for _, c := range v.Costs {
					if c.Cost != t.Cost || c.Delta == nil || c.Delta.Method != "log-ratio" {
						continue
					}
					xs := make([]float64, len(c.Delta.Rounds))
					for i, r := range c.Delta.Rounds {
						xs[i] = math.Log1p(r / 100)
					}
					ls := c.Delta.launches
					if len(ls) != len(xs) {
						ls = nil
					}
					out = append(out, PairedSeries{Variant: v.Name, Step: step, Cost: c.Cost, LogRatios: xs, Launches: ls})
				}
			}
		}
	}
	return out
}

// SettleRounds returns the most leading rounds that a start of load step
// step of sum left out of its comparisons while its JVMs settled
// (Summary.Settling), 0 when none did.
func SettleRounds(sum *Summary, step int) int {
	n := 0
	for _, st := range sum.Settling {
		if st.Step == step {
			n = max(n, len(st.Rounds))
		}
	}
	return n
}

// JVMStartTerm reports whether sum's CPU intervals carry the JVM
// start-to-start term (JVMs started once), which more starts divide.
func JVMStartTerm(sum *Summary) bool { return len(sum.StartNoisePct) > 0 }
