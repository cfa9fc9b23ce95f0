package analyze

import (
	"maps"
	"slices"

	"github.com/tollperf/toll/record"
)

// TrialCache keeps each trial's own costs between the summaries of a run
// that grows: a precision run summarizes every trial so far after every
// round, and a trial's costs (SummarizeTrial) depend on its record and the
// trims alone, so each is read once, not once a round. Summarize takes a
// copy of what it finds, so what one summary flags, attributes or leaves
// out is not the next one's. Records are keyed by identity: a trial
// written again as a new record is read again. A TrialCache is not safe
// for concurrent use.
type TrialCache struct {
	trim    Trim
	seconds bool
	trials  map[*record.Trial]cachedTrial
}

// cachedTrial is one trial's summary and its error.
type cachedTrial struct {
	tc  *TrialCosts
	err error
}

// NewTrialCache returns an empty cache (Options.Cache).
func NewTrialCache() *TrialCache {
	return &TrialCache{trials: map[*record.Trial]cachedTrial{}}
}

// summarize returns summarizeTrial(t, trim, seconds), read from the cache
// when it holds t under the same trims, and a copy of it. A nil cache reads
// every trial.
func (c *TrialCache) summarize(t *record.Trial, trim Trim, seconds bool) (*TrialCosts, error) {
	if c == nil {
		return summarizeTrial(t, trim, seconds)
	}
	if c.trim != trim || c.seconds != seconds {
		c.trim, c.seconds = trim, seconds
		clear(c.trials)
	}
	got, ok := c.trials[t]
	if !ok {
		got.tc, got.err = summarizeTrial(t, trim, seconds)
		c.trials[t] = got
	}
	return got.tc.clone(), got.err
}

// clone returns a copy of tc that shares nothing a summary changes: its
// costs, its services' costs, its flags and what it notes of neighbours and
// requests.
func (tc *TrialCosts) clone() *TrialCosts {
	if tc == nil {
		return nil
	}
	c := *tc
	c.Costs = maps.Clone(tc.Costs)
	if tc.Services != nil {
		c.Services = make(map[string]map[Cost]float64, len(tc.Services))
		for name, costs := range tc.Services {
			c.Services[name] = maps.Clone(costs)
		}
	}
	c.Flags = slices.Clone(tc.Flags)
	c.Seconds = slices.Clone(tc.Seconds)
	c.neighbours = slices.Clone(tc.neighbours)
	c.saturated = slices.Clone(tc.saturated)
	c.idleBusy = maps.Clone(tc.idleBusy)
	c.requests = slices.Clone(tc.requests)
	if tc.NeighbourCores != nil {
		n := *tc.NeighbourCores
		c.NeighbourCores = &n
	}
	return &c
}
