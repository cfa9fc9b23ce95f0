package kube

import (
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tollperf/toll/record"
)

func histOf(t *testing.T, values ...int64) string {
	t.Helper()
	h := hdr.New(1, 60_000_000, 3)
	for _, v := range values {
		h.RecordValue(v)
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func podLine(t *testing.T, start time.Time, values ...int64) LoadLine {
	n := uint64(len(values))
	h := histOf(t, values...)
	return LoadLine{Start: start, MeasureStart: start, MeasureEnd: start.Add(time.Second),
		Load:      record.LoadTotals{Scheduled: n, Sent: n, Completed: n, OK: n, Histogram: h, Requests: []record.RequestTotals{{Name: "a", Sent: n, Completed: n, OK: n, Histogram: h}}},
		Intervals: []record.Interval{{T: 0, Scheduled: n, Sent: n, Completed: n, OK: n, Histogram: h}}}
}

// TestMergeLoad checks that the lines of a trial's load pods add up, their
// histograms merged in total, per request and per second, and that pods
// that did not start together make the trial say so.
func TestMergeLoad(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := mergeLoad([]LoadLine{podLine(t, at, 100, 200), podLine(t, at, 300, 400, 5000)})
	if err != nil {
		t.Fatal(err)
	}
	if m.Error != "" || m.Load.Completed != 5 || m.Load.Requests[0].Completed != 5 || m.Intervals[0].Completed != 5 {
		t.Fatalf("merged %+v", m)
	}
	for _, enc := range []string{m.Load.Histogram, m.Load.Requests[0].Histogram, m.Intervals[0].Histogram} {
		h, err := hdr.Decode([]byte(enc))
		if err != nil {
			t.Fatal(err)
		}
		if h.TotalCount() != 5 || h.Max() < 4990 || h.Min() != 100 {
			t.Errorf("merged histogram: %d values, %d to %d", h.TotalCount(), h.Min(), h.Max())
		}
	}
	late, err := mergeLoad([]LoadLine{podLine(t, at, 100), podLine(t, at.Add(3*time.Second), 100)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(late.Error, "started 3s apart") {
		t.Errorf("pods 3 s apart: error %q", late.Error)
	}
}
