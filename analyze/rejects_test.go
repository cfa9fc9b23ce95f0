package analyze

import (
	"math"
	"slices"
	"testing"

	"github.com/tollperf/toll/record"
)

// withExports sets tr's sink counts: per second, accepted and rejected
// requests of 1 KiB each, the rejected ones part of Requests and Bytes as
// the record has them; spans only with the accepted ones.
func withExports(tr *record.Trial, accepted, rejected uint64) *record.Trial {
	tr.Exports = true
	tr.Start = tr.MeasureStart
	for i := range tr.Telemetry {
		s := &tr.Telemetry[i]
		k := uint64(i)
		s.Spans = k * accepted * 10
		s.Requests = k * (accepted + rejected)
		s.Bytes = k * (accepted + rejected) * 1024
		s.Rejected = k * rejected
		s.RejectedBytes = k * rejected * 1024
	}
	return tr
}

// TestRejectedExports checks that the bytes of rejected requests are not
// telemetry received, that rejects have rows of their own, and that a
// variant whose every export is rejected is flagged exports-rejected.
func TestRejectedExports(t *testing.T) {
	tests := []struct {
		name               string
		accepted, rejected uint64
		wantKiB, wantRej   float64 // telemetry received, KiB/s; rejects, /s
		wantFlag           string  // "" for none of the telemetry flags
	}{
		{name: "all accepted", accepted: 4, wantKiB: 4},
		{name: "some rejected", accepted: 3, rejected: 1, wantKiB: 3, wantRej: 1},
		{name: "all rejected", rejected: 2, wantRej: 2, wantFlag: FlagExportsRejected},
		{name: "nothing", wantFlag: FlagNoTelemetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := withExports(synthetic(t, 1, 1, "agent", 10, 100, 0.001, 1000), tt.accepted, tt.rejected)
			tc, err := SummarizeTrial(tr, Trim{})
			if err != nil {
				t.Fatal(err)
			}
			tc.Flags = append(tc.Flags, flagTelemetry(tr, tc)...) // as Summarize does, after the cycle
			if got := tc.Costs[ExportBytes]; math.Abs(got-tt.wantKiB) > 1e-9 {
				t.Errorf("telemetry received = %g KiB/s, want %g", got, tt.wantKiB)
			}
			if got := tc.Costs[Rejected]; math.Abs(got-tt.wantRej) > 1e-9 {
				t.Errorf("exports rejected = %g/s, want %g", got, tt.wantRej)
			}
			if got := tc.Costs[RejectedBytes]; math.Abs(got-tt.wantRej) > 1e-9 {
				t.Errorf("telemetry rejected = %g KiB/s, want %g", got, tt.wantRej)
			}
			var codes []string
			for _, f := range tc.Flags {
				if f.Code == FlagExportsRejected || f.Code == FlagNoTelemetry {
					codes = append(codes, f.Code)
				}
			}
			if want := []string{tt.wantFlag}; tt.wantFlag == "" && len(codes) > 0 || tt.wantFlag != "" && !slices.Equal(codes, want) {
				t.Errorf("telemetry flags %v, want %q", codes, tt.wantFlag)
			}
		})
	}
}

// TestRejectedRows checks that a run whose sinks rejected something has
// the rejects' rows, compared by difference with the baseline's none, and
// that a run without any has none.
func TestRejectedRows(t *testing.T) {
	run := func(rejected uint64) *Summary {
		t.Helper()
		m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "agent"}}
		var trials []*record.Trial
		for r := 1; r <= 3; r++ {
			base := synthetic(t, 2*r-1, r, "baseline", 10, 100, 0.001, 1000)
			agent := withExports(synthetic(t, 2*r, r, "agent", 10, 100, 0.001, 1000), 3, rejected)
			trials = append(trials, base, agent)
		}
		s, err := Summarize(m, trials, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	rows := func(vr VariantResult) map[Cost]CostResult {
		out := map[Cost]CostResult{}
		for _, c := range vr.Costs {
			out[c.Cost] = c
		}
		return out
	}

	s := run(1)
	agent := rows(s.Steps[0].Variants[1])
	for _, c := range []Cost{Rejected, RejectedBytes} {
		got, ok := agent[c]
		if !ok {
			t.Fatalf("no %s row in a run whose sink rejected exports", c)
		}
		if got.Value <= 0 || got.Delta == nil || got.Delta.Method != "difference" || got.Delta.Abs <= 0 {
			t.Errorf("%s = %+v (delta %+v), want > 0, compared by difference", c, got, got.Delta)
		}
	}

	s = run(0)
	for _, vr := range s.Steps[0].Variants {
		for _, c := range []Cost{Rejected, RejectedBytes} {
			if got, ok := rows(vr)[c]; ok {
				t.Errorf("%s has a %s row %+v in a run without rejects", vr.Name, c, got)
			}
		}
	}
}
