package analyze

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tollperf/toll/record"
)

// Window is the part of a trial that is analysed, in seconds relative to the
// trial's MeasureStart.
type Window struct {
	From float64 `json:"from_s"`
	To   float64 `json:"to_s"`
}

// Length is the window's length in seconds.
func (w Window) Length() float64 { return w.To - w.From }

// Trim is how much of each measured window to drop, in seconds.
type Trim struct {
	Start, End float64
}

// WindowOf returns the analysis window of t: its measured window less trim.
// Trims are applied in whole load intervals (seconds).
func WindowOf(t *record.Trial, trim Trim) Window {
	return Window{From: trim.Start, To: t.Window().Seconds() - trim.End}
}

// rise returns how much a cumulative series (a counter sampled at ts) grew
// over w, its values interpolated at w's edges.
func (w Window) rise(ts, vs []float64) float64 {
	return interpolate(ts, vs, w.To) - interpolate(ts, vs, w.From)
}

// interpolate returns the value of a cumulative series at time x, linearly
// between the samples around it (clamped at the ends).
func interpolate(ts, vs []float64, x float64) float64 {
	if len(ts) == 0 {
		return 0
	}
	if x <= ts[0] {
		return vs[0]
	}
	for i := 1; i < len(ts); i++ {
		if x <= ts[i] {
			f := (x - ts[i-1]) / (ts[i] - ts[i-1])
			return vs[i-1] + f*(vs[i]-vs[i-1])
		}
	}
	return vs[len(vs)-1]
}

// inWindow reports whether an interval starting at t lies in w.
func (w Window) holdsInterval(t float64) bool { return t >= w.From-1e-9 && t+1 <= w.To+1e-9 }

// mergeHistograms decodes and merges the encoded histograms of the
// intervals in w.
func mergeHistograms(ivs []record.Interval, w Window) (*hdr.Histogram, error) {
	var total *hdr.Histogram
	for _, iv := range ivs {
		if !w.holdsInterval(iv.T) {
			continue
		}
		if iv.Histogram == "" {
			if iv.Completed > 0 {
				return nil, fmt.Errorf("the second at t=%gs has %d completed requests and no latency histogram", iv.T, iv.Completed)
			}
			continue
		}
		h, err := decodeLatency(iv.Histogram)
		if err != nil {
			return nil, fmt.Errorf("the second at t=%gs: %w", iv.T, err)
		}
		if total == nil {
			total = h
			continue
		}
		total.Merge(h)
	}
	return total, nil
}
