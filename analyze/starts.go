package analyze

import (
	"maps"
	"math"
	"slices"

	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/stats"
)

// variesByStart says whether cost c differs between two starts of one
// program by more than its rounds show: how much memory a process maps
// and keeps (its heap's sizing, its allocator's arenas), how many threads
// and files it holds, and a runtime's figures whose metric says so (a
// JVM's heap, metaspace, classes, collections and compilation). Two
// starts of one Go program read memory 7–16% apart; a run that started each variant once compares two such draws, which no
// number of rounds averages away. Kalibera and Jones's rule applies:
// repeat at the level where the variance arises, here the start. CPU per
// request of a JVM carries its start-to-start term from the calibration
// instead (fixedVariance).
func variesByStart(c Cost) bool {
	switch c {
	case RSS, Memory, Threads, FDs:
		return true
	}
	m, ok := runtimeMetric(c)
	return ok && m.VariesByStart
}

// startedOnce says whether m's load test started each variant's services
// once (or once per start, starts:) for many rounds, so that a cost that
// varies by start compares starts, not rounds. Restarted every round or
// trial, each round is a start of its own.
func startedOnce(m *record.Manifest) bool {
	return m.Restart == "once" && loadTest(m) && m.Mode != "find-max"
}

// compareCost compares one cost of a variant with the baseline's over
// their paired rounds (base, vari, each under its start in launches): over
// the run's starts for a cost that varies by start of services started
// once (once: startedOnce), else round by round, widened by what the run
// holds fixed (sideFixed, for JVMs started starts times). fixed is the
// variance it widened by, and raised sideFixed's.
func compareCost(cal record.Calibration, info CostInfo, base, vari []float64, launches []int, starts int, once bool) (d Delta, fixed float64, raised bool) {
	if once && variesByStart(info.Cost) {
		fixed = fixedVariance(cal, info.Cost, 0)
		return compareStarts(info, base, vari, launches, fixed), fixed, false
	}
	fixed, raised = sideFixed(cal, info.Cost, starts, base, vari, launches)
	return Compare(info, base, vari, fixed), fixed, raised
}

// compareStarts is Compare for a cost that varies by start (variesByStart)
// in a run that started its services once per start: each start's paired
// rounds are averaged into one pair (their geometric means for a ratio,
// their means for a difference), and the interval is a t interval over
// the starts, widened by the run-level term fixed. One start gives an
// estimate and no interval, and the verdict says why. Two give a t
// interval with one degree of freedom, ±12.7 standard errors: wide, and
// still right; a memory change as large as an agent's heap shows in it.
func compareStarts(info CostInfo, base, vari []float64, launches []int, fixed float64) Delta {
	var order []int
	by := map[int][]int{}
	for i, l := range launches {
		if _, ok := by[l]; !ok {
			order = append(order, l)
		}
		by[l] = append(by[l], i)
	}
	// The starts' pairs are compared as Compare compares rounds: a count
	// of a few by its difference, and so averaged by its means, not by
	// the geometric means of its ratios.
	ratio := byRatio(info, base, vari)
	var bs, vs []float64
	for _, l := range order {
		var b, v float64
		for _, i := range by[l] {
			if ratio {
				b, v = b+math.Log(base[i]), v+math.Log(vari[i])
			} else {
				b, v = b+base[i], v+vari[i]
			}
		}
		n := float64(len(by[l]))
		b, v = b/n, v/n
		if ratio {
			b, v = math.Exp(b), math.Exp(v)
		}
		bs, vs = append(bs, b), append(vs, v)
	}
	d := compareFloored(info, bs, vs, fixed, startsFloor(base, vari, by, ratio))
	d.Starts = len(order)
	if d.Starts >= 2 || d.N == 0 {
		return d
	}
	// Too few starts: the estimate stands, the interval does not.
	d = withoutInterval(d, NoVerdictFewStarts)
	d.Reading = estimateReading(ReadNoInterval, &d, info).withWhy(WhyOneStartEach, d.Starts)
	return d
}

// startsFloor returns the least variance of the mean of the starts' paired
// values that the rounds under each start show (by holds the indices of
// each start's rounds in base and vari, in round order; ratio says the
// starts are compared by their rounds' log ratios). A start's mean carries
// what differs between starts and its own rounds' spread over their
// number; the starts' spread estimates both, but from two or three values
// it can read any less, two starts' differences agreeing by chance to a
// hundredth of their rounds' spread (an identical twin's collection time,
// −0.0081 and −0.0080 ms/s, read a change at p = 0.002). The rounds'
// spread within the starts, pooled, is read from many more values: where
// the starts' spread is less, the interval takes it (a random-effects
// model whose between-starts variance is not let below zero;
// stats.WithinGroups, over pairs of consecutive rounds, so that a cost
// that comes every other window is not counted as noise).
func startsFloor(base, vari []float64, by map[int][]int, ratio bool) meanFloor {
	pooled := func(x func(i int) float64) float64 {
		groups := make([][]float64, 0, len(by))
		// In the starts' order, so that the same rounds read the same
		// floor to the last bit.
		for _, l := range slices.Sorted(maps.Keys(by)) {
			is := by[l]
			g := make([]float64, len(is))
			for j, i := range is {
				g[j] = x(i)
			}
			groups = append(groups, g)
		}
		v, _ := stats.WithinGroups(groups)
		return v
	}
	f := meanFloor{diff: pooled(func(i int) float64 { return vari[i] - base[i] })}
	if ratio {
		f.log = pooled(func(i int) float64 { return math.Log(vari[i] / base[i]) })
	} else if m := (stats.Mean(base) + stats.Mean(vari)) / 2; m > 0 {
		// Where a round reads 0 the starts' means may still compare by
		// ratio: the difference's floor over their level.
		f.log = f.diff / (m * m)
	}
	return f
}

// Why a change has no verdict (Delta.NoVerdict).
const (
	// NoVerdictFewStarts: a cost that varies by start, from one start of
	// each variant.
	NoVerdictFewStarts = "few-starts"
	// NoVerdictDesign: the run's design makes the difference meaningless
	// (sides loaded at once wait for each other's CPU; every side reads
	// the one machine).
	NoVerdictDesign = "design"
)
