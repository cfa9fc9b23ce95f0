package torecord

import (
	"testing"
	"time"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/sink"
)

// TestTelemetryCountsRejectedBytes checks that a telemetry sample's bytes
// are every request's, the rejected ones' included, which analyze takes
// out again: a record written before rejects were counted apart reads the
// same.
func TestTelemetryCountsRejectedBytes(t *testing.T) {
	tests := []struct {
		c         sink.Counts
		wantBytes uint64
	}{
		{sink.Counts{Requests: 3, Bytes: 300}, 300},
		{sink.Counts{Requests: 3, Bytes: 300, Rejected: 1, RejectedBytes: 50}, 350},
	}
	for _, tt := range tests {
		got := Telemetry(2.5, tt.c)
		if got.T != 2.5 || got.Bytes != tt.wantBytes || got.RejectedBytes != tt.c.RejectedBytes || got.Requests != tt.c.Requests {
			t.Errorf("Telemetry(%+v) = %+v, want bytes %d", tt.c, got, tt.wantBytes)
		}
	}
}

// TestErrorExamplesNoneIsNil checks that a load without failed requests
// records no examples (the field is left out of the trial file).
func TestErrorExamplesNoneIsNil(t *testing.T) {
	if got := ErrorExamples(load.ErrorExamples{}); got != nil {
		t.Errorf("no failures: %+v, want nil", got)
	}
	if got := ErrorExamples(load.ErrorExamples{Timeout: "GET /: timeout"}); got == nil || got.Timeout != "GET /: timeout" {
		t.Errorf("a timeout: %+v", got)
	}
}

// TestJVMInitTime checks that a JVM's init time is recorded only when its
// counters hold a start and a later end of initialisation.
func TestJVMInitTime(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name       string
		start, end time.Time
		want       float64
	}{
		{"both", start, start.Add(1500 * time.Millisecond), 1.5},
		{"no start", time.Time{}, start, 0},
		{"not done", start, time.Time{}, 0},
	}
	for _, tt := range tests {
		got := JVM(42, jvm.Counters{VMStart: tt.start, VMInitDone: tt.end, GCTime: 2 * time.Second})
		if got.Pid != 42 || got.InitS != tt.want || got.GCTime != 2 {
			t.Errorf("%s: %+v, want init %v s", tt.name, got, tt.want)
		}
	}
}
