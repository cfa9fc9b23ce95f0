package report

import (
	"context"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	dto "github.com/prometheus/client_model/go"

	"github.com/tollperf/toll/analyze"
)

// Push sends the summary's metrics (see OpenMetrics) to a Prometheus
// Pushgateway at url, grouped under job "toll", the scenario and the run
// (RunLabel): each run is a group of its own, so a push replaces only what
// the same run pushed before (toll report --push again) and every run's
// series stay for Prometheus to scrape. The Pushgateway keeps groups until
// they are deleted.
func Push(ctx context.Context, url string, s *analyze.Summary) error {
	// The grouping key's labels travel in the URL, so they leave the
	// series; the Pushgateway puts them back.
	grouping := []string{"scenario", "run"}
	fams := Families(s)
	for _, f := range fams {
		for _, m := range f.Metric {
			m.Label = slices.DeleteFunc(m.Label, func(l *dto.LabelPair) bool { return slices.Contains(grouping, l.GetName()) })
		}
	}
	g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return fams, nil })
	p := push.New(url, "toll").Grouping("scenario", s.Scenario).Grouping("run", RunLabel(s)).Gatherer(g)
	if err := p.PushContext(ctx); err != nil {
		return fmt.Errorf("push to %s: %w", url, err)
	}
	return nil
}
