package analyze

import (
	"encoding/json"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tollperf/toll/record"
)

// FuzzSummarizeTrial feeds the analysis arbitrary trial files, their
// latency histograms included (a base64 HdrHistogram per second): never a
// panic, whatever a damaged or crafted file holds.
func FuzzSummarizeTrial(f *testing.F) {
	h := hdr.New(1, 60_000_000, 3)
	for v := range int64(100) {
		h.RecordValue(1000 + 10*v)
	}
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		f.Fatal(err)
	}
	start := time.Unix(100, 0)
	tr := &record.Trial{Index: 1, Round: 1, Variant: "otel", TargetRate: 50, MeasureStart: start, MeasureEnd: start.Add(2500 * time.Millisecond),
		Services: []record.ServiceRun{{Name: "app", Measured: true}},
		Samples:  []record.ServiceSeries{{Service: "app", Points: []record.Sample{{T: 0, CPU: 1, RSS: 1 << 20}, {T: 2, CPU: 1.2, RSS: 1 << 20}}}}}
	for i := range 3 {
		tr.Intervals = append(tr.Intervals, record.Interval{T: float64(i), Scheduled: 50, Sent: 50, Completed: 50, OK: 50, Histogram: string(enc)})
	}
	good, err := json.Marshal(tr)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, 0.0, 0.0)
	f.Add(good, 1.0, 0.5)
	f.Add([]byte(`{"measure_start":"1970-01-01T00:00:00Z","measure_end":"1970-01-01T00:00:09Z","intervals":[{"t":0,"completed":1,"histogram":"HISTFAAAAB"}]}`), 0.0, 0.0)
	f.Fuzz(func(t *testing.T, b []byte, trimStart, trimEnd float64) {
		var tr record.Trial
		if json.Unmarshal(b, &tr) != nil {
			return
		}
		if len(tr.Intervals) > 1000 || tr.Window() > time.Hour {
			return // bounded: the fuzzer's inputs, not toll's limits
		}
		_, _ = SummarizeTrial(&tr, Trim{Start: trimStart, End: trimEnd})
	})
}
