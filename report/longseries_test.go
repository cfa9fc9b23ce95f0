package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
)

// withSeconds gives every per-second series of s n seconds of values, a
// slow wave with one spike.
func withSeconds(s *analyze.Summary, n int) {
	for i := range s.Steps {
		for j := range s.Steps[i].Series {
			for k := range s.Steps[i].Series[j].Metrics {
				m := &s.Steps[i].Series[j].Metrics[k]
				m.T, m.Median, m.Low, m.High, m.Trials = nil, nil, nil, nil, nil
				for x := range n {
					v := 1 + 0.5*math.Sin(float64(x)/1000)
					if x == n/3 {
						v = 50
					}
					m.T = append(m.T, float64(x))
					m.Median, m.Low, m.High = append(m.Median, v), append(m.Low, v*0.9), append(m.High, v*1.1)
					m.Trials = append(m.Trials, 4)
				}
			}
		}
	}
}

// TestHTMLLongSeriesBounded checks that report.html does not grow with
// the length of the per-second series: a day's seconds (86,400 per
// series) make a page hardly larger than a few minutes' do, each chart
// still spans the whole day, and a one-second spike still shows.
func TestHTMLLongSeriesBounded(t *testing.T) {
	size := func(n int) (int, string) {
		s, _ := htmlFixture(t)
		withSeconds(s, n)
		var b bytes.Buffer
		if err := HTML(&b, s); err != nil {
			t.Fatal(err)
		}
		return b.Len(), b.String()
	}
	short, _ := size(600)
	long, page := size(86400)
	if long > short*3/2 {
		t.Errorf("report.html is %d bytes with 86,400 seconds per series, %d with 600: want it bounded by what a chart can show", long, short)
	}
	if !strings.Contains(page, `class="xt">8e+04<`) {
		t.Errorf("no chart's x axis reaches 80000 s: the day is not drawn whole")
	}
	if !strings.Contains(page, `class="yt">60<`) {
		t.Errorf("no chart's y axis reaches the spike of 50")
	}
}
