package torecord

import (
	"testing"

	"github.com/tollperf/toll/load"
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
