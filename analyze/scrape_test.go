package analyze

import (
	"math"
	"testing"

	"github.com/tollperf/toll/record"
)

func TestScrapeCosts(t *testing.T) {
	tests := []struct {
		name    string
		scrapes []record.Scrape
		want    map[Cost]float64
	}{
		{"counter rate, gauge mean", []record.Scrape{
			{T: 0, Metrics: []record.ScrapedMetric{{Name: "spans", Type: "counter", Value: 100}, {Name: "queue", Type: "gauge", Value: 4}}},
			{T: 10, Metrics: []record.ScrapedMetric{{Name: "spans", Type: "counter", Value: 600}, {Name: "queue", Type: "gauge", Value: 8}}},
		}, map[Cost]float64{"scrape_spans_per_s": 50, "scrape_queue": 6}},
		// An agent that restarted reset its counter: no rate rather than
		// a negative one.
		{"counter reset", []record.Scrape{
			{T: 0, Metrics: []record.ScrapedMetric{{Name: "spans", Type: "counter", Value: 100}}},
			{T: 10, Metrics: []record.ScrapedMetric{{Name: "spans", Type: "counter", Value: 5}}},
		}, map[Cost]float64{}},
		// The start's scrape failed: a gauge still has its reading, a
		// counter has no rate.
		{"one scrape", []record.Scrape{
			{T: 10, Metrics: []record.ScrapedMetric{{Name: "spans", Type: "counter", Value: 600}, {Name: "queue", Type: "gauge", Value: 8}}},
		}, map[Cost]float64{"scrape_queue": 8}},
		// A counter created at its first count is absent before.
		{"counter created during the window", []record.Scrape{
			{T: 0, Metrics: []record.ScrapedMetric{{Name: "queue", Type: "gauge", Value: 0}}},
			{T: 4, Metrics: []record.ScrapedMetric{{Name: "spans", Type: "counter", Value: 200}, {Name: "queue", Type: "gauge", Value: 2}}},
		}, map[Cost]float64{"scrape_spans_per_s": 50, "scrape_queue": 1}},
		{"none", nil, map[Cost]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scrapeCosts(record.ServiceSeries{Service: "agent", Scrapes: tt.scrapes})
			if len(got) != len(tt.want) {
				t.Fatalf("scrapeCosts = %v, want %v", got, tt.want)
			}
			for c, v := range tt.want {
				if math.Abs(got[c]-v) > 1e-9 {
					t.Errorf("%s = %g, want %g", c, got[c], v)
				}
			}
		})
	}
	if ci := Info(ScrapeCost("otelcol_exporter_sent_spans", true)); ci.Label != "scraped: otelcol_exporter_sent_spans" || ci.Unit != "/s" || !ci.Additive {
		t.Errorf("Info of a scraped counter: %+v", ci)
	}
}

// TestScrapeAndNMTCompared gives an agent service that both variants run a
// counter growing 4× faster, and the variant's JVM 30 MiB more off-heap:
// both come out as significant changes, and a failed scrape and an NMT
// that was off are flags that do not invalidate the trial.
func TestScrapeAndNMTCompared(t *testing.T) {
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "agent"}}
	var trials []*record.Trial
	noise := []float64{1.0, 1.03, 0.97, 1.01, 0.99}
	for r := 1; r <= 5; r++ {
		for i, v := range []string{"baseline", "agent"} {
			tr := synthetic(t, 2*r-1+i, r, v, 5, 100, 0.001, 1000)
			rate, off := 100*noise[r-1], 50*noise[r-1]
			if v == "agent" {
				rate, off = 4*rate, off+30
			}
			tr.Samples[0].Scrapes = []record.Scrape{
				{T: 0, Metrics: []record.ScrapedMetric{{Name: "accepted", Type: "counter", Value: 1000}}},
				{T: 5, Metrics: []record.ScrapedMetric{{Name: "accepted", Type: "counter", Value: 1000 + 5*rate}}},
			}
			tr.Samples[0].NMT = &record.NMT{T: 5, Committed: uint64((64 + off) * (1 << 20)), HeapCommitted: 64 << 20}
			trials = append(trials, tr)
		}
	}
	trials[0].Samples[0].ScrapeError = "connection refused"
	trials[0].Samples[0].Scrapes = trials[0].Samples[0].Scrapes[1:]
	trials[1].Samples[0].NMTError = "native memory tracking is not enabled"
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Cost]float64{ScrapeCost("accepted", true): 300, JVMOffHeap: 30, JVMCommitted: 30}
	for _, c := range s.Steps[0].Variants[1].Costs {
		w, ok := want[c.Cost]
		if !ok {
			continue
		}
		delete(want, c.Cost)
		if c.Delta == nil || !c.Delta.Significant || math.Abs(c.Delta.Abs-w) > 0.1*w {
			t.Errorf("%s: %+v, want a significant change of about %g", c.Cost, c.Delta, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("no rows for %v", want)
	}
	codes := map[string]int{}
	for _, f := range s.Flags {
		codes[f.Code]++
	}
	if codes[FlagScrape] != 1 || codes[FlagNMT] != 1 {
		t.Errorf("flags %+v: want one scrape and one nmt", s.Flags)
	}
	if Invalidates(FlagScrape) || Invalidates(FlagNMT) {
		t.Error("a failed scrape or NMT reading invalidates its trial; its other costs stand")
	}
}
