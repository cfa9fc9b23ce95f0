package run

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// TestProgressLineReadsAsTheAnalysis checks that a trial's progress line
// numbers it as its flags do (its Index over the plan's trials, whatever
// order trials finish in) and gives the achieved rate the analysis gives,
// for a trial cut short inside a second and for one with trims.
func TestProgressLineReadsAsTheAnalysis(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		window    time.Duration
		trimStart time.Duration
		completed []uint64
		rate      float64 // over the whole seconds in the window
	}{
		{"interrupted inside a second", 2460 * time.Millisecond, 0, []uint64{51, 52, 21}, 51.5},
		{"whole window", 3 * time.Second, 0, []uint64{50, 50, 50}, 50},
		{"trimmed, interrupted", 4300 * time.Millisecond, time.Second, []uint64{10, 50, 52, 49, 9}, 151.0 / 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &record.Trial{Index: 3, Round: 2, Variant: "otel", TargetRate: 50,
				MeasureStart: start, MeasureEnd: start.Add(tt.window), Interrupted: tt.window%time.Second != 0, Error: "interrupted"}
			for i, c := range tt.completed {
				tr.Intervals = append(tr.Intervals, record.Interval{T: float64(i), Scheduled: c, Sent: c, Completed: c, OK: c})
				tr.Load.Completed += c
			}
			var out strings.Builder
			r := &runner{s: &scenario.Scenario{Trim: scenario.Trim{Start: scenario.Duration(tt.trimStart)}},
				opt: Options{Progress: &out}, total: 6, planned: 8, done: 0}
			r.finished(tr, nil)
			line := out.String()
			if !strings.HasPrefix(line, "[3/8] ") {
				t.Errorf("progress line %q: want it to number the trial [3/8], as its flags say trial 3", line)
			}
			tc, err := analyze.SummarizeTrial(tr, analyze.Trim{Start: tt.trimStart.Seconds()})
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.Costs[analyze.Throughput]; math.Abs(got-tt.rate) > 1e-9 {
				t.Errorf("analysis: achieved %g req/s, want %g: the requests of the whole seconds over those seconds", got, tt.rate)
			}
			want := fmt.Sprintf("achieved %7.1f req/s", tc.Costs[analyze.Throughput])
			if !strings.Contains(line, want) {
				t.Errorf("progress line %q: want %q, the analysis's rate (its rate-missed flag's)", line, want)
			}
		})
	}
}

// TestLiveFigures checks that the status line of a sliced duet's side
// (loaded half of a window twice its duration) gives the seconds of its
// own load, to compare with the duration, and its rate and CPU while
// loaded, to compare with the target: not 6s of 3s at 150 of 300 req/s.
func TestLiveFigures(t *testing.T) {
	for _, tt := range []struct {
		name                  string
		share                 float64
		index                 int
		completed             uint64
		wantS, wantRate, wCPU float64
	}{
		{"throughout", 0, 2, 300, 3, 300, 0.2},
		{"in turns, last second", 0.5, 5, 150, 3, 300, 0.4},
		{"in turns, first second", 0.5, 0, 150, 0.5, 300, 0.4},
	} {
		s, rate, cpu := liveFigures(load.Second{Index: tt.index, Completed: tt.completed}, tt.share, 0.2)
		if s != tt.wantS || rate != tt.wantRate || cpu != tt.wCPU {
			t.Errorf("%s: %gs, %g req/s, %g cores; want %gs, %g req/s, %g cores", tt.name, s, rate, cpu, tt.wantS, tt.wantRate, tt.wCPU)
		}
	}
}

// TestPosition checks that the progress lines count trials against the
// plan's total in a fixed run, and not against the ceiling of rounds a
// run in precision mode plans.
func TestPosition(t *testing.T) {
	tests := []struct {
		name      string
		precision bool
		want      string
	}{
		{"fixed rounds", false, "[4/600]"},
		{"precision mode", true, "[4]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scenario.Scenario{}
			s.Precision.On = tt.precision
			r := &runner{s: s, planned: 600}
			if got := r.position(4); got != tt.want {
				t.Errorf("position(4) = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestProgressLineCPUOverTheWindow checks that a trial's progress line
// gives its measured services' CPU over the analysis window, as the
// table does, when its samples reach into the idle seconds before the
// load starts and after it ends (a cluster's probe is read with a margin
// either side of the load).
func TestProgressLineCPUOverTheWindow(t *testing.T) {
	start := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		points []record.Sample
		want   float64 // cores over the window
	}{
		{"idle before and after", []record.Sample{{T: -4, CPU: 1}, {T: -2, CPU: 1}, {T: 0, CPU: 1}, {T: 1, CPU: 1.5}, {T: 2, CPU: 2}, {T: 3, CPU: 2.5}, {T: 4, CPU: 3}, {T: 6, CPU: 3}}, 0.5},
		{"samples off the edges", []record.Sample{{T: -1.5, CPU: 0}, {T: -0.5, CPU: 0}, {T: 0.5, CPU: 0.4}, {T: 3.5, CPU: 1.6}, {T: 4.5, CPU: 1.6}}, 0.35},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &record.Trial{Index: 1, Round: 1, Variant: "otel", TargetRate: 50, MeasureStart: start, MeasureEnd: start.Add(4 * time.Second),
				Services: []record.ServiceRun{{Name: "consumer", Measured: true}},
				Samples:  []record.ServiceSeries{{Service: "consumer", Points: tt.points}}}
			for i := range 4 {
				tr.Intervals = append(tr.Intervals, record.Interval{T: float64(i), Scheduled: 50, Sent: 50, Completed: 50, OK: 50})
			}
			tr.Load.Completed = 200
			var out strings.Builder
			r := &runner{s: &scenario.Scenario{}, opt: Options{Progress: &out}, total: 2, planned: 2}
			r.finished(tr, nil)
			tc, err := analyze.SummarizeTrial(tr, analyze.Trim{})
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.Costs[analyze.CPUCores]; math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("analysis: %g cores, want %g", got, tt.want)
			}
			if want := fmt.Sprintf("CPU %.3f cores", tt.want); !strings.Contains(out.String(), want) {
				t.Errorf("progress line %q: want %q, the table's CPU over the measured window", out.String(), want)
			}
		})
	}
}
