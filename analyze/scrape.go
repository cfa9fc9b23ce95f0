package analyze

import (
	"strings"

	"github.com/tollperf/toll/record"
)

// scrapeCostPrefix starts the name of a figure from a service's own
// metrics (scrape:); a counter's rate ends in scrapeRateSuffix.
const (
	scrapeCostPrefix = "scrape_"
	scrapeRateSuffix = "_per_s"
)

// ScrapeCost is the cost of the scraped metric name: its rate per second
// over the window for a counter, its mean for a gauge.
func ScrapeCost(name string, counter bool) Cost {
	if counter {
		return Cost(scrapeCostPrefix + name + scrapeRateSuffix)
	}
	return Cost(scrapeCostPrefix + name)
}

// ScrapedMetric splits a cost from a service's scraped metrics into the
// metric's name and whether it is a counter's rate; ok is false for any
// other cost.
func ScrapedMetric(c Cost) (name string, counter, ok bool) {
	name, ok = strings.CutPrefix(string(c), scrapeCostPrefix)
	if !ok {
		return "", false, false
	}
	if base, isRate := strings.CutSuffix(name, scrapeRateSuffix); isRate {
		return base, true, true
	}
	return name, false, true
}

// scrapeCostInfo describes a scraped figure. It is additive: an agent's
// count of something (spans dropped, queue length) is often 0.
func scrapeCostInfo(c Cost) (CostInfo, bool) {
	name, counter, ok := ScrapedMetric(c)
	switch {
	case !ok:
		return CostInfo{}, false
	case counter:
		return CostInfo{Cost: c, Label: "scraped: " + name, Unit: "/s", Digits: 2, Additive: true}, true
	}
	return CostInfo{Cost: c, Label: "scraped: " + name, Digits: 2, Additive: true}, true
}

// scrapeCosts turns a service's scrapes over a trial's window into costs:
// a counter's increase from the first scrape to the last over the time
// between them (from 0 when the first lacked it; none if it went down: the
// agent restarted; none with a single scrape), and a gauge's mean over the
// scrapes.
func scrapeCosts(s record.ServiceSeries) map[Cost]float64 {
	if len(s.Scrapes) == 0 {
		return nil
	}
	first, last := s.Scrapes[0], s.Scrapes[len(s.Scrapes)-1]
	out := map[Cost]float64{}
	for _, m := range last.Metrics {
		if m.Type != "counter" {
			continue
		}
		if len(s.Scrapes) < 2 || last.T <= first.T {
			continue
		}
		// A counter the first scrape lacked did not exist yet: agents
		// create one at its first count (the Collector's spans accepted),
		// so it started from 0.
		start := 0.0
		for _, a := range first.Metrics {
			if a.Name == m.Name {
				start = a.Value
			}
		}
		if m.Value >= start {
			out[ScrapeCost(m.Name, true)] = (m.Value - start) / (last.T - first.T)
		}
	}
	sums, counts := map[string]float64{}, map[string]float64{}
	for _, sc := range s.Scrapes {
		for _, m := range sc.Metrics {
			if m.Type == "counter" {
				continue
			}
			sums[m.Name] += m.Value
			counts[m.Name]++
		}
	}
	for n, v := range sums {
		out[ScrapeCost(n, false)] = v / counts[n]
	}
	return out
}
