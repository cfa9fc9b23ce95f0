// Package torecord turns what toll's measuring packages read (the load
// generator's result, a sink's counts) into the trial
// record's types, the same way wherever a trial ran: on this machine or in
// a pod of a Kubernetes cluster.
package torecord

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/sink"
)

// FillLoad copies the load generator's result into a trial record: the
// totals, the latency histograms and the per-second intervals. The in-pod
// load command of a Kubernetes run (package kube) records the same fields.
func FillLoad(tr *record.Trial, res *load.Result) {
	tr.Load = record.LoadTotals{Scheduled: res.Scheduled, Sent: res.Sent, Completed: res.Completed, OK: res.OK,
		Missed: res.Missed, Errors: errorCounts(res.Errors), Histogram: encodeHist(res.Latency)}
	tr.Load.WarmupCompleted, tr.Load.Connections = res.WarmupCompleted, res.Connections
	tr.Load.ErrorExamples = ErrorExamples(res.ErrorExamples)
	if res.Lateness.TotalCount() > 0 {
		tr.Load.LatenessP99US, tr.Load.LatenessMaxUS = res.Lateness.ValueAtQuantile(99), res.Lateness.Max()
	}
	for _, rr := range res.Requests {
		tr.Load.Requests = append(tr.Load.Requests, record.RequestTotals{Name: rr.Name, Sent: rr.Sent,
			Completed: rr.Completed, OK: rr.OK, Errors: errorCounts(rr.Errors), Histogram: encodeHist(rr.Latency)})
	}
	for _, iv := range res.Intervals {
		tr.Intervals = append(tr.Intervals, record.Interval{T: iv.Offset.Seconds(), Scheduled: iv.Scheduled, Sent: iv.Sent,
			Completed: iv.Completed, OK: iv.OK, Errors: errorCounts(iv.Errors), Histogram: string(iv.EncodedLatency)})
	}
}

// ErrorExamples is the record of the load generator's examples of failed
// requests, or nil when none failed.
func ErrorExamples(x load.ErrorExamples) *record.ErrorExamples {
	if x == (load.ErrorExamples{}) {
		return nil
	}
	return &record.ErrorExamples{Connect: x.Connect, Timeout: x.Timeout, HTTP4xx: x.HTTP4xx, HTTP5xx: x.HTTP5xx, Other: x.Other}
}

func errorCounts(e load.ErrorCounts) record.ErrorCounts {
	return record.ErrorCounts{Connect: e.Connect, Timeout: e.Timeout, HTTP4xx: e.HTTP4xx, HTTP5xx: e.HTTP5xx, Other: e.Other}
}

func encodeHist(h *hdr.Histogram) string {
	if h == nil {
		return ""
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// Telemetry records a sink's counts c at t seconds. The record's
// bytes are every request's, rejected ones included, as they always were;
// analyze takes the rejected ones out.
func Telemetry(t float64, c sink.Counts) record.Telemetry {
	return record.Telemetry{T: t, Requests: c.Requests, Bytes: c.Bytes + c.RejectedBytes,
		Spans: c.Spans, Points: c.MetricPoints, Logs: c.LogRecords, Profiles: c.Profiles,
		Rejected: c.Rejected, RejectedBytes: c.RejectedBytes}
}
