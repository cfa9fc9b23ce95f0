// Package scrape reads a service's own metrics from an endpoint in the
// Prometheus text format (an agent that exposes its own counters, as
// Kindling or the OpenTelemetry Collector do), parsed with
// prometheus/common's expfmt.
package scrape

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MaxBody bounds what is read of one answer: an exporter's page of
// metrics is tens of KiB; toll runs the scrape in its own process.
const MaxBody = 16 << 20

// Kinds of a metric's value.
const (
	// Counter is a cumulative count: its cost is a rate.
	Counter = "counter"
	// Gauge is a level: its cost is a mean.
	Gauge = "gauge"
)

// Metric is one metric family's value: the sum over its series.
type Metric struct {
	Name string
	// Kind is Counter or Gauge. An untyped metric is a Gauge; a histogram
	// or a summary is its count of observations, a Counter.
	Kind  string
	Value float64
}

// Get fetches url and returns the families named in names that the page
// has, in the order of names. A name the page lacks is left out.
func Get(ctx context.Context, client *http.Client, url string, names []string) ([]Metric, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// Ask for the text format: an exporter that could answer in protobuf
	// or OpenMetrics answers in text as well.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	ms, err := Parse(io.LimitReader(resp.Body, MaxBody), names)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return ms, nil
}

// Parse reads a page in the Prometheus text format and returns the
// families named in names that it has, in the order of names.
func Parse(r io.Reader, names []string) ([]Metric, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	var out []Metric
	for _, n := range names {
		f, ok := fams[n]
		if !ok {
			continue
		}
		out = append(out, sum(f))
	}
	return out, nil
}

// sum adds a family's series up.
func sum(f *dto.MetricFamily) Metric {
	m := Metric{Name: f.GetName(), Kind: Gauge}
	switch f.GetType() {
	case dto.MetricType_COUNTER, dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY:
		m.Kind = Counter
	}
	for _, s := range f.GetMetric() {
		switch {
		case s.Counter != nil:
			m.Value += s.GetCounter().GetValue()
		case s.Gauge != nil:
			m.Value += s.GetGauge().GetValue()
		case s.Untyped != nil:
			m.Value += s.GetUntyped().GetValue()
		case s.Histogram != nil:
			m.Value += float64(s.GetHistogram().GetSampleCount())
		case s.Summary != nil:
			m.Value += float64(s.GetSummary().GetSampleCount())
		}
	}
	return m
}
