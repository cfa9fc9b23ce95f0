package scrape

import (
	"strings"
	"testing"
)

// FuzzParse feeds the Prometheus text parser arbitrary pages: never a
// panic, and at most one figure per family asked for.
func FuzzParse(f *testing.F) {
	f.Add("# TYPE up gauge\nup 1\n", "up")
	f.Add("# TYPE http_requests_total counter\nhttp_requests_total{code=\"200\"} 10\nhttp_requests_total{code=\"500\"} 2\n", "http_requests_total")
	f.Add("# TYPE lat histogram\nlat_bucket{le=\"0.1\"} 1\nlat_bucket{le=\"+Inf\"} 2\nlat_sum 0.3\nlat_count 2\n", "lat")
	f.Add("# TYPE s summary\ns{quantile=\"0.5\"} NaN\ns_sum +Inf\ns_count 1e308\n", "s")
	f.Add("x 1 1700000000000\nx{a=\"\\\"\"} -1\n", "x")
	f.Fuzz(func(t *testing.T, page, names string) {
		ns := strings.Split(names, ",")
		ms, err := Parse(strings.NewReader(page), ns)
		if err != nil {
			return
		}
		if len(ms) > len(ns) {
			t.Fatalf("%d figures for %d names", len(ms), len(ns))
		}
		for _, m := range ms {
			if m.Kind != Counter && m.Kind != Gauge {
				t.Fatalf("%s: kind %q", m.Name, m.Kind)
			}
		}
	})
}
