package kube

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tollperf/toll/record"
)

// LoadStartDelay is how far ahead of a load Job's creation its pods are
// told to start when there are several (--not-before): time for the
// scheduler to place them and the kubelet to start them, images pulled.
const LoadStartDelay = 10 * time.Second

// maxStartSkew is how far apart the several pods of one trial may start
// and still be one timeline: one release quantum of the open model.
const maxStartSkew = 2 * time.Millisecond

// mergeLoad merges the lines of one trial's load pods into the trial's:
// counts are summed and HdrHistograms merged, in total, per request and
// per second. Pods that did not start on one timeline (one was placed
// after --not-before) make the merged line's Error say so.
func mergeLoad(lines []LoadLine) (LoadLine, error) {
	if len(lines) == 1 {
		return lines[0], nil
	}
	m := lines[0]
	m.Load.Requests = nil
	m.Intervals = nil
	total, err := newMerger(m.Load.Histogram)
	if err != nil {
		return m, err
	}
	byName := map[string]*record.RequestTotals{}
	var names []string
	reqHist := map[string]*hdr.Histogram{}
	var ivs []record.Interval
	ivHist := map[int]*hdr.Histogram{}
	for i, l := range lines {
		if l.Error != "" && m.Error == "" {
			m.Error = l.Error
		}
		if d := l.Start.Sub(m.Start).Abs(); d > maxStartSkew && m.Error == "" {
			m.Error = fmt.Sprintf("the trial's %d load pods started %s apart (one after --not-before): not one timeline", len(lines), d.Round(time.Millisecond))
		}
		if l.MeasureEnd.After(m.MeasureEnd) {
			m.MeasureEnd = l.MeasureEnd
		}
		if i > 0 {
			addTotals(&m.Load, l.Load)
			if err := total.add(l.Load.Histogram); err != nil {
				return m, err
			}
		}
		for _, rq := range l.Load.Requests {
			t, ok := byName[rq.Name]
			if !ok {
				t = &record.RequestTotals{Name: rq.Name}
				byName[rq.Name] = t
				names = append(names, rq.Name)
			}
			t.Sent, t.Completed, t.OK = t.Sent+rq.Sent, t.Completed+rq.Completed, t.OK+rq.OK
			addErrors(&t.Errors, rq.Errors)
			if err := mergeInto(reqHist, rq.Name, rq.Histogram); err != nil {
				return m, err
			}
		}
		for k, iv := range l.Intervals {
			if k == len(ivs) {
				ivs = append(ivs, record.Interval{T: iv.T})
			}
			a := &ivs[k]
			a.Scheduled, a.Sent, a.Completed, a.OK = a.Scheduled+iv.Scheduled, a.Sent+iv.Sent, a.Completed+iv.Completed, a.OK+iv.OK
			addErrors(&a.Errors, iv.Errors)
			if err := mergeIntoInt(ivHist, k, iv.Histogram); err != nil {
				return m, err
			}
		}
	}
	if m.Load.Histogram, err = total.encode(); err != nil {
		return m, err
	}
	for _, n := range names {
		t := byName[n]
		if h := reqHist[n]; h != nil {
			if t.Histogram, err = encode(h); err != nil {
				return m, err
			}
		}
		m.Load.Requests = append(m.Load.Requests, *t)
	}
	for k := range ivs {
		if h := ivHist[k]; h != nil {
			if ivs[k].Histogram, err = encode(h); err != nil {
				return m, err
			}
		}
	}
	m.Intervals = ivs
	return m, nil
}

func addTotals(a *record.LoadTotals, b record.LoadTotals) {
	a.Scheduled += b.Scheduled
	a.Sent += b.Sent
	a.Completed += b.Completed
	a.OK += b.OK
	a.Missed += b.Missed
	a.WarmupCompleted += b.WarmupCompleted
	addErrors(&a.Errors, b.Errors)
}

func addErrors(a *record.ErrorCounts, b record.ErrorCounts) {
	a.Connect += b.Connect
	a.Timeout += b.Timeout
	a.HTTP4xx += b.HTTP4xx
	a.HTTP5xx += b.HTTP5xx
	a.Other += b.Other
}

// merger merges encoded HdrHistograms into one.
type merger struct{ h *hdr.Histogram }

func newMerger(first string) (*merger, error) {
	m := &merger{}
	return m, m.add(first)
}

func (m *merger) add(enc string) error {
	if enc == "" {
		return nil
	}
	h, err := hdr.Decode([]byte(enc))
	if err != nil {
		return fmt.Errorf("a load pod's histogram: %w", err)
	}
	if m.h == nil {
		m.h = h
	} else if dropped := m.h.Merge(h); dropped > 0 {
		return fmt.Errorf("merging load pods' histograms dropped %d values", dropped)
	}
	return nil
}

func (m *merger) encode() (string, error) {
	if m.h == nil {
		return "", nil
	}
	return encode(m.h)
}

func mergeInto(hs map[string]*hdr.Histogram, key, enc string) error {
	m := &merger{h: hs[key]}
	if err := m.add(enc); err != nil {
		return err
	}
	hs[key] = m.h
	return nil
}

func mergeIntoInt(hs map[int]*hdr.Histogram, key int, enc string) error {
	m := &merger{h: hs[key]}
	if err := m.add(enc); err != nil {
		return err
	}
	hs[key] = m.h
	return nil
}

func encode(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode merged histogram: %w", err)
	}
	return string(b), nil
}
