package analyze

import (
	"maps"
	"math"
	"slices"

	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/stats"
)

// Delta is a variant's difference from the baseline for one cost, from the
// rounds in which both ran.
type Delta struct {
	// N is the number of paired rounds.
	N int `json:"n"`
	// Abs is the mean variant value minus the mean baseline value.
	Abs float64 `json:"abs"`
	// Pct is the estimated change in percent: the geometric mean of the
	// per-round ratios, minus one. Absent for additive costs.
	Pct *float64 `json:"pct,omitempty"`
	// CILow and CIHigh bound the 95% interval, in percent for ratio costs
	// and in the cost's unit for additive costs. Absent when N < 2.
	CILow  *float64 `json:"ci_low,omitempty"`
	CIHigh *float64 `json:"ci_high,omitempty"`
	// CIUnit is "%" or the cost's unit.
	CIUnit string `json:"ci_unit"`
	// AbsCILow and AbsCIHigh bound the 95% interval of Abs, in the cost's
	// unit (the mean of the per-round differences), for every cost: a
	// latency's change in ms, such as the extra hop of a sidecar proxy.
	// Absent when N < 2.
	AbsCILow  *float64 `json:"abs_ci_low,omitempty"`
	AbsCIHigh *float64 `json:"abs_ci_high,omitempty"`
	// PValue is the two-sided t-test p-value of no difference.
	PValue *float64 `json:"p_value,omitempty"`
	// Significant is true when the interval excludes zero.
	Significant bool `json:"significant"`
	// SignificantCorrected is Significant once the variant's costs at
	// the step are corrected for their number (VariantResult's
	// Multiplicity): the primary cost's own verdict, the others' by Holm.
	SignificantCorrected bool `json:"significant_corrected"`
	// BootstrapAgrees is false when a bootstrap interval disagrees with the
	// t interval about excluding zero (few rounds, skewed ratios).
	BootstrapAgrees bool `json:"bootstrap_agrees"`
	// Verdict is the change in words ("+3.1% ± 0.8%", "~", "n/a (…)"):
	// analyze leaves it empty and says how the change reads in Reading;
	// report fills it in when it writes summary.json, for a reader of
	// the JSON, and a summary read back keeps the words it was written
	// with.
	Verdict string `json:"verdict"`
	// Reading is how the change reads, for a report to put in words. A
	// change read back from summary.json has none (ReadStored).
	Reading Reading `json:"-"`
	// Method is "log-ratio" or "difference".
	Method string `json:"method"`
	// Rounds holds each paired round's change, in CIUnit: the ratio's
	// change in percent (log-ratio) or the difference (difference), in
	// round order. They are the evidence behind the interval.
	Rounds []float64 `json:"rounds,omitempty"`
	// Equivalent is set when the whole 95% interval of a relative change
	// lies within ±MarginPct: no change beyond the margin, which is
	// distinct from an interval too wide to tell ("~"). MarginPct is the
	// cost's precision target; absent for a cost that has none.
	Equivalent bool     `json:"equivalent,omitempty"`
	MarginPct  *float64 `json:"margin_pct,omitempty"`
	// Direction is where the interval lies against no change: up or down
	// when Significant, same when it holds 0, none without an interval.
	Direction Direction `json:"direction,omitempty"`
	// HalfWidth is half the width of the interval [CILow, CIHigh], in
	// CIUnit; AbsHalfWidth that of [AbsCILow, AbsCIHigh]. Absent without
	// the interval.
	HalfWidth    *float64 `json:"half_width,omitempty"`
	AbsHalfWidth *float64 `json:"abs_half_width,omitempty"`
	// launches are the starts the paired rounds ran under, for the
	// stopping rule (PrecisionSeries); nil for a controlled change.
	launches []int
	// Controlled is set when the change is corrected by the run's A/A
	// control (scenario's control: true): each round's change is the
	// variant's against the baseline less the control's against the
	// baseline, so that whatever the method does to every variant that is
	// not the baseline (a place in a duet or a round, a baseline that runs
	// twice per round) cancels, and its noise widens the interval.
	Controlled bool `json:"controlled,omitempty"`
	// FixedPct is the standard deviation, in percent, of what the run held
	// the same in every round of the change and its interval carries
	// beside the rounds' spread: effects fixed for the run on both sides
	// (record.Calibration's RunNoisePct) and, for JVMs started once, what
	// differs between two starts of one (its JVMStartNoisePct), divided among the run's starts
	// (starts:), or as much as its starts differed when that is more.
	// Absent for a difference.
	FixedPct float64 `json:"fixed_pct,omitempty"`
	// FromZero is set when the baseline's value was 0 in every paired
	// round (a variant's spans, where the baseline exports none): the
	// change has no ratio and no size relative to the baseline, only its
	// difference (Abs), which is the variant's value.
	FromZero bool `json:"from_zero,omitempty"`
	// Size classes the change for colour: SizeNone when there is no
	// verdict of a difference (no interval, or one that holds 0) or no
	// baseline to size it by (FromZero), else by the estimate's size
	// relative to the baseline (see SizeOf).
	Size Size `json:"size"`
	// Starts is set when the change compares starts rather than rounds:
	// a cost that varies by start (variesByStart) in a run that started
	// each variant's services once per start, each start's rounds
	// averaged into one pair. Its interval is over Starts pairs.
	Starts int `json:"starts,omitempty"`
	// NoVerdict says why the change has no interval although its rounds
	// do ("few-starts", "design"); empty otherwise.
	NoVerdict string `json:"no_verdict,omitempty"`
}

// Size classes a change by how large it is, so that a report can colour a
// +1 thread differently from +50% CPU.
type Size string

// The sizes of a change.
const (
	SizeNone   Size = "none"   // no resolved difference
	SizeSmall  Size = "small"  // under 5% of the baseline
	SizeMedium Size = "medium" // 5% to 20%
	SizeLarge  Size = "large"  // 20% or more (or from a baseline of 0)
)

// SizeOf classes a significant change of pct percent of the baseline.
func SizeOf(pct float64) Size {
	switch a := math.Abs(pct); {
	case a < 5:
		return SizeSmall
	case a < 20:
		return SizeMedium
	}
	return SizeLarge
}

// CalibrationOf returns the calibration m's run was analysed with: the
// one its manifest records, or record.DefaultCalibration for a run
// recorded before manifests carried it.
func CalibrationOf(m *record.Manifest) record.Calibration {
	if m != nil && m.Calibration != nil {
		return *m.Calibration
	}
	return record.DefaultCalibration()
}

// jvmStartNoise returns cal's start-to-start term per cost: the standard
// deviation in percent of what differs in a JVM's cost between two starts
// of the same program (its JIT's compiled code), which a JVM started once
// for a whole run (restart: once) carries into every round.
func jvmStartNoise(cal record.Calibration) map[Cost]float64 {
	out := make(map[Cost]float64, len(cal.JVMStartNoisePct))
	for c, pct := range cal.JVMStartNoisePct {
		out[Cost(c)] = pct
	}
	return out
}

// JVMStartNoisePct returns cost c's start-to-start term for JVMs started
// once in toll's default calibration, 0 for a cost it was not measured for.
func JVMStartNoisePct(c Cost) float64 {
	return record.DefaultCalibration().JVMStartNoisePct[string(c)]
}

// fixedVariance returns the variance, in squared log units, that effects
// fixed for a whole run add to one variant's level of cost c: cal's
// RunNoisePct for every cost, and, when the run's JVMs were started once,
// starts times (0 when they were not), cal's JVMStartNoisePct for each
// start: the rounds of one start share its draw, and the run's level
// averages the starts'. starts may be a start count that weighs the
// starts by their rounds (effectiveStarts).
func fixedVariance(cal record.Calibration, c Cost, starts float64) float64 {
	sigma := math.Log1p(cal.RunNoisePct / 100)
	v := sigma * sigma
	if starts > 0 {
		s := math.Log1p(cal.JVMStartNoisePct[string(c)] / 100)
		v += s * s / starts
	}
	return v
}

// effectiveStarts returns how many starts the mean of the rounds run under
// launches (the start of each) averages, as the start-to-start term sees
// it: each start weighs by its share of the rounds, so that the count is
// (Σn)²/Σn² over the starts' rounds n. Starts that ran alike many rounds
// count as their number; a run whose last start ran one round of forty
// counts barely more than the starts before it. 0 without rounds.
func effectiveStarts(launches []int) float64 {
	n := map[int]float64{}
	for _, l := range launches {
		n[l]++
	}
	var sum, squares float64
	for _, k := range n {
		sum += k
		squares += k * k
	}
	if squares == 0 {
		return 0
	}
	return sum * sum / squares
}

// startSpread estimates, from the rounds of a run that started its JVMs
// several times, the variance, in squared log units, that what differs
// between starts adds to the change of one start: xs are the paired
// rounds' log ratios and launches the start each ran under. It is the
// spread of the starts' means less what their rounds' own spread puts into
// it (stats.BetweenGroups), at least 0; ok is false with fewer than two
// starts of two rounds or more.
func startSpread(xs []float64, launches []int) (v float64, ok bool) {
	by := map[int][]float64{}
	for i, x := range xs {
		by[launches[i]] = append(by[launches[i]], x)
	}
	var starts [][]float64
	for _, l := range slices.Sorted(maps.Keys(by)) {
		starts = append(starts, by[l])
	}
	return stats.BetweenGroups(starts)
}

// byRatio says whether cost info, of the paired values base and vari, is
// compared by the ratio of each pair rather than by its difference: not an
// additive cost, which may be 0 in a healthy run, nor any pair with a value
// of 0 or less, which has no ratio, nor a count whose baseline is a few
// (minRatioCount), whose ratio reads large where the difference says what
// changed.
func byRatio(info CostInfo, base, vari []float64) bool {
	nonPositive := func(x float64) bool { return x <= 0 }
	if info.Additive || slices.ContainsFunc(base, nonPositive) || slices.ContainsFunc(vari, nonPositive) {
		return false
	}
	return !info.Cost.counted() || stats.Mean(base) >= minRatioCount
}

// Compare computes the paired difference of variant against baseline.
// base[i] and vari[i] are the values of the same round. fixed is the
// variance, in squared log units, that effects fixed for the whole run add
// to each side's level (sideFixed): a ratio's interval carries it for
// both.
func Compare(info CostInfo, base, vari []float64, fixed float64) Delta {
	return compareFloored(info, base, vari, fixed, meanFloor{})
}

// meanFloor is the least variance that the mean of a comparison's paired
// values has, known from elsewhere than their spread (startsFloor): of
// their log ratios where the comparison is by ratio, and of their
// differences.
type meanFloor struct {
	log, diff float64
}

// compareFloored is Compare with the variance of the pairs' mean raised
// to floor where their spread reads less.
func compareFloored(info CostInfo, base, vari []float64, fixed float64, floor meanFloor) Delta {
	n := len(base)
	d := Delta{N: n, BootstrapAgrees: true, Size: SizeNone}
	if n == 0 || len(vari) != n {
		d.Reading = Reading{Code: ReadNoPairs}
		return d
	}
	d.Abs = stats.Mean(vari) - stats.Mean(base)
	d.FromZero = !slices.ContainsFunc(base, func(b float64) bool { return b != 0 })
	ratio := byRatio(info, base, vari)
	// A cost measured once per start of the services pairs starts, not
	// rounds; over two starts its interval (t with one degree of freedom)
	// is ±12.7 standard errors of a spread read from two values: up to
	// thousands of percent, or none at all where the two differences
	// happen to agree to the millisecond.
	few := fewStarts(info.Cost, n)
	diffs := make([]float64, n)
	for i := range base {
		diffs[i] = vari[i] - base[i]
	}
	if div := stats.TInterval(diffs).AtLeast(floor.diff); div.HasCI && few == "" {
		if ratio {
			// The effects fixed for the run act on each side's level,
			// in proportion to it: the difference carries both sides'
			// (vari·σ)² + (base·σ)², as the ratio's interval carries
			// 2σ². Without them an identical twin's difference could
			// read as a change its ratio does not show.
			mb, mv := stats.Mean(base), stats.Mean(vari)
			div = div.Widened((mb*mb + mv*mv) * fixed)
		}
		lo, hi := div.Low, div.High
		d.AbsCILow, d.AbsCIHigh = &lo, &hi
	}
	var xs []float64
	xsFloor := floor.diff
	if ratio {
		d.Method, d.CIUnit, xsFloor = "log-ratio", "%", floor.log
		for i := range base {
			xs = append(xs, math.Log(vari[i]/base[i]))
			d.Rounds = append(d.Rounds, 100*(vari[i]/base[i]-1))
		}
	} else {
		d.Method, d.CIUnit = "difference", info.Unit
		for i := range base {
			xs = append(xs, vari[i]-base[i])
			d.Rounds = append(d.Rounds, vari[i]-base[i])
		}
	}
	iv := stats.TInterval(xs).AtLeast(xsFloor)
	if ratio {
		// Each variant's level in a run carries effects that its rounds
		// share (fixed); a change between two variants carries two.
		iv = iv.Widened(2 * fixed)
		d.FixedPct = 100 * math.Expm1(math.Sqrt(2*fixed))
	}
	pct := func(x float64) float64 { return 100 * (math.Exp(x) - 1) }
	if ratio {
		p := pct(iv.Mean)
		d.Pct = &p
	}
	if !iv.HasCI || few != "" {
		why := few
		if why == "" {
			why = WhyOneRound
		}
		d.Reading = estimateReading(ReadNoInterval, &d, info).withWhy(why, n)
		d.Settle()
		return d
	}
	lo, hi := iv.Low, iv.High
	if ratio {
		lo, hi = pct(lo), pct(hi)
	}
	d.CILow, d.CIHigh = &lo, &hi
	p := iv.PValue
	d.PValue = &p
	d.Significant = iv.Excludes
	blo, bhi := stats.Bootstrap(xs, 2000)
	d.BootstrapAgrees = (blo > 0 || bhi < 0) == iv.Excludes
	switch b := stats.Mean(base); {
	case !d.Significant:
	case ratio:
		d.Size = SizeOf(*d.Pct)
	case b > 0:
		d.Size = SizeOf(100 * d.Abs / b)
	}
	d.Settle()
	if !d.Significant {
		d.Reading = Reading{Code: ReadSame}
		return d
	}
	d.Reading = estimateReading(ReadChange, &d, info)
	if !ratio {
		d.Reading.Estimate = iv.Mean
	}
	d.Reading.HalfWidth = *d.HalfWidth
	return d
}

// JudgeEquivalence records whether d's whole interval lies within
// ±marginPct (a relative change only). When it does and the interval
// holds 0, it reads equivalent (ReadEquivalent) in place of the same.
func (d *Delta) JudgeEquivalence(marginPct float64) {
	if d.Pct == nil || d.CILow == nil || d.CIHigh == nil || !(marginPct > 0) {
		return
	}
	m := marginPct
	d.MarginPct = &m
	d.Equivalent = -m <= *d.CILow && *d.CIHigh <= m
	if d.Equivalent && !d.Significant {
		d.Reading = Reading{Code: ReadEquivalent}
	}
}
