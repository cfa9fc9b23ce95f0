package analyze

import (
	"slices"
	"time"

	"github.com/tollperf/toll/record"
)

// Measured is how much of a run's time went into measured windows: what a
// budget is for. Warm-ups, starts, stops and the load before each window
// measure nothing.
type Measured struct {
	// WindowS is the time, in seconds, when some trial's measured window
	// was open (windows at once, a duet's, count once); ElapsedS the run's
	// time from its start to its end (or its last trial's end, for a run
	// still going or cut short).
	WindowS  float64 `json:"window_s"`
	ElapsedS float64 `json:"elapsed_s"`
	// CountedS is the part of WindowS that the comparisons counted, when
	// some trials were left out while their start settled
	// (Summary.Settling); 0 otherwise. Windows open at once share each
	// moment: a moment of five sides' windows of which one was left out
	// counts four fifths (countedWindow).
	CountedS float64 `json:"counted_s,omitempty"`
}

// Share is WindowS over ElapsedS, from 0 to 1.
func (m Measured) Share() float64 {
	if m.ElapsedS <= 0 {
		return 0
	}
	return min(m.WindowS/m.ElapsedS, 1)
}

// measured returns the share of m's run that trials' measured windows
// held: the union of their windows over the time from the run's start to
// its end. ok is false without a start or a window.
func measured(m *record.Manifest, trials []*record.Trial) (Measured, bool) {
	type span struct{ from, to time.Time }
	var spans []span
	last := m.Finished
	for _, t := range trials {
		if t.MeasureStart.IsZero() || !t.MeasureEnd.After(t.MeasureStart) {
			continue
		}
		spans = append(spans, span{t.MeasureStart, t.MeasureEnd})
		if m.Finished.IsZero() && t.MeasureEnd.After(last) {
			last = t.MeasureEnd
		}
	}
	if m.Started.IsZero() || len(spans) == 0 || !last.After(m.Started) {
		return Measured{}, false
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	var open time.Duration
	cur := spans[0]
	for _, s := range spans[1:] {
		if s.from.After(cur.to) {
			open += cur.to.Sub(cur.from)
			cur = s
			continue
		}
		if s.to.After(cur.to) {
			cur.to = s.to
		}
	}
	open += cur.to.Sub(cur.from)
	return Measured{WindowS: open.Seconds(), ElapsedS: last.Sub(m.Started).Seconds()}, true
}

// countedWindow returns the seconds of the trials' measured windows that
// the comparisons counted (counted holds those they did), each moment
// shared among the windows open at it: the moment counts by the share of
// those windows whose trial was counted.
func countedWindow(trials []*record.Trial, counted map[*record.Trial]bool) float64 {
	type edge struct {
		at      time.Time
		open    int // +1 as a window opens, -1 as it closes
		counted bool
	}
	var edges []edge
	for _, t := range trials {
		if t.MeasureStart.IsZero() || !t.MeasureEnd.After(t.MeasureStart) {
			continue
		}
		c := counted[t]
		edges = append(edges, edge{t.MeasureStart, 1, c}, edge{t.MeasureEnd, -1, c})
	}
	slices.SortFunc(edges, func(a, b edge) int { return a.at.Compare(b.at) })
	var sum float64
	open, openCounted := 0, 0
	for i, e := range edges {
		if i > 0 && open > 0 {
			sum += e.at.Sub(edges[i-1].at).Seconds() * float64(openCounted) / float64(open)
		}
		open += e.open
		if e.counted {
			openCounted += e.open
		}
	}
	return sum
}
