package report

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	dto "github.com/prometheus/client_model/go"

	"github.com/tollperf/toll/analyze"
)

// Push sends the summary's metrics (see OpenMetrics) to a Prometheus
// Pushgateway at url, under job "toll" and the scenario's name, replacing
// what that scenario pushed before.
func Push(ctx context.Context, url string, s *analyze.Summary) error {
	// The scenario travels as the grouping key, so it leaves the labels.
	fams := Families(s)
	for _, f := range fams {
		for _, m := range f.Metric {
			kept := m.Label[:0]
			for _, l := range m.Label {
				if l.GetName() != "scenario" {
					kept = append(kept, l)
				}
			}
			m.Label = kept
		}
	}
	g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return fams, nil })
	p := push.New(url, "toll").Grouping("scenario", s.Scenario).Gatherer(g)
	if err := p.PushContext(ctx); err != nil {
		return fmt.Errorf("push to %s: %w", url, err)
	}
	return nil
}
