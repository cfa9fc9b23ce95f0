package analyze

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/record"
)

// startupRun builds a start-up experiment's trials: per repetition and CPU
// limit, a start of the baseline and of an agent whose start takes
// overhead times as long, with noise common to the pair (the machine's).
func startupRun(t *testing.T, overhead, machine float64) *Summary {
	t.Helper()
	m := &record.Manifest{Scenario: "s", Baseline: "baseline", Variants: []string{"baseline", "agent"}, Workload: "startup"}
	var trials []*record.Trial
	noise := []float64{1, 1.3, 0.8, 1.1, 0.95, 1.2}
	i := 0
	for step, limit := range []float64{1, 2} {
		for r := 1; r <= len(noise); r++ {
			for _, v := range []string{"baseline", "agent"} {
				ready := 4 / limit * noise[r-1] * machine
				if v == "agent" {
					ready *= overhead * (1 + 0.01*float64(r%3))
				}
				i++
				trials = append(trials, &record.Trial{Index: i, Round: r, Step: step, Variant: v,
					Startup: &record.StartupRun{CPULimit: limit, Services: []record.ServiceStart{{Name: "app", Measured: true,
						PortOpenS: ready - 0.1, ReadyS: ready, CPUS: ready * 0.9, RSSBytes: 200 << 20,
						JVM:        &record.JVMStart{CreatedS: 0.2, InitDoneS: 0.15, Classes: 9000},
						LogMetrics: map[string]float64{"app_start_s": ready - 0.3}}}}})
			}
		}
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStartupSummary(t *testing.T) {
	s := startupRun(t, 2, 1)
	if len(s.Steps) != 2 || s.Steps[0].Label() != "1 CPU" || s.Steps[1].Label() != "2 CPU" {
		t.Fatalf("steps %+v", s.Steps)
	}
	for _, st := range s.Steps {
		agent := st.Variants[1]
		r := agent.Ratio
		if r == nil || math.Abs(r.Times-2.02) > 0.05 || !r.Significant {
			t.Errorf("%s: ratio %+v, want about 2.02×, significant", st.Label(), r)
		}
		if got := r.String(); !strings.HasSuffix(got, "× baseline time to ready") {
			t.Errorf("headline %q", got)
		}
		costs := map[Cost]CostResult{}
		for _, c := range agent.Costs {
			costs[c.Cost] = c
		}
		for _, c := range []Cost{StartupReady, StartupPortOpen, StartupJVM, StartupApp, StartupCPU, StartupRSS, StartupClasses, LogCost("app_start_s")} {
			if _, ok := costs[c]; !ok {
				t.Errorf("%s: no %s", st.Label(), c)
			}
		}
		if d := costs[StartupJVM].Delta; d == nil || d.Significant {
			t.Errorf("%s: the JVM's own start-up is the same, yet reads %+v", st.Label(), d)
		}
		if d := costs[StartupApp].Delta; d == nil || !d.Significant {
			t.Errorf("%s: the application's start-up doubled, yet reads %+v", st.Label(), d)
		}
	}
}

// TestStartupGate checks `toll compare A B --fail-on 'startup_ready_s > +10%'`
// on start-up runs: an agent whose start grew by 20% between the runs fails
// it, the same agent on a slower machine does not.
func TestStartupGate(t *testing.T) {
	g, err := ParseGate("startup_ready_s > +10%")
	if err != nil {
		t.Fatal(err)
	}
	a := startupRun(t, 2, 1)
	for _, tt := range []struct {
		name string
		b    *Summary
		fail bool
	}{
		{"same agent, slower machine", startupRun(t, 2, 1.3), false},
		{"agent 20% slower to start", startupRun(t, 2.4, 1), true},
	} {
		rc, err := CompareRuns(a, tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if len(rc.Steps) != 2 || rc.Steps[0].Label() != "1 CPU" {
			t.Fatalf("%s: steps %+v", tt.name, rc.Steps)
		}
		if got := g.Check(rc); got.Failed() != tt.fail {
			t.Errorf("%s: gate says %v", tt.name, got)
		}
	}
}

// TestFailedJobNotAveraged checks that a failed job is flagged, listed and
// left out of its variant's figures, and that a variant every job of which
// failed makes the run invalid.
func TestFailedJobNotAveraged(t *testing.T) {
	m := &record.Manifest{Scenario: "j", Baseline: "baseline", Variants: []string{"baseline", "agent"}, Workload: "job"}
	var trials []*record.Trial
	for r := 1; r <= 4; r++ {
		trials = append(trials,
			&record.Trial{Index: 2*r - 1, Round: r, Variant: "baseline", Job: &record.JobRun{WallS: 1, UserS: 0.9, Work: 1000, Per: 1e6, Unit: "messages"}},
			&record.Trial{Index: 2 * r, Round: r, Variant: "agent", Job: &record.JobRun{WallS: 1.1, UserS: 1, Work: 1000, Per: 1e6, Unit: "messages"}})
	}
	trials[3].Job = &record.JobRun{WallS: 50, Failed: true, ExitCode: 1, Error: "exited with exit status 1"}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	agent := s.Steps[0].Variants[1]
	if agent.Rounds != 3 {
		t.Errorf("agent has %d repetitions averaged in, want 3", agent.Rounds)
	}
	for _, c := range agent.Costs {
		if c.Cost == JobWall && math.Abs(c.Value-1.1) > 1e-9 {
			t.Errorf("agent's wall time %v: the failed run was averaged in", c.Value)
		}
		if c.Cost == JobWallPerWork && c.Label != "job: wall time per 1000000 messages" {
			t.Errorf("label %q", c.Label)
		}
	}
	if len(s.Flags) != 1 || s.Flags[0].Code != FlagFailed || !s.Valid() {
		t.Errorf("flags %+v, invalid %+v", s.Flags, s.Invalidities)
	}
	for i := 1; i < len(trials); i += 2 {
		tr := trials[i]
		tr.Job.Failed = true
	}
	s, _ = Summarize(m, trials, Options{})
	if s.Valid() || !slices.ContainsFunc(s.Invalidities, func(iv Invalidity) bool { return iv.Variant == "agent" && iv.Step == "job" && iv.Jobs }) {
		t.Errorf("every agent job failed, yet invalid is %+v", s.Invalidities)
	}
}

// TestQuietJobKept checks that a job of a variant that exports whose
// agent sent nothing (a JVM's `java -version` under an agent: no traced
// work) is neither flagged no-telemetry nor left out: its costs are
// compared, and its spans read 0 in their own row.
func TestQuietJobKept(t *testing.T) {
	m := &record.Manifest{Scenario: "j", Baseline: "baseline", Variants: []string{"baseline", "agent"}, Workload: "job"}
	var trials []*record.Trial
	for r := 1; r <= 3; r++ {
		trials = append(trials,
			&record.Trial{Index: 2*r - 1, Round: r, Variant: "baseline", Job: &record.JobRun{WallS: 0.1, UserS: 0.05}},
			&record.Trial{Index: 2 * r, Round: r, Variant: "agent", Exports: true, Job: &record.JobRun{WallS: 5, UserS: 8}})
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Flags) != 0 || !s.Valid() {
		t.Errorf("flags %+v, invalid %+v", s.Flags, s.Invalidities)
	}
	agent := s.Steps[0].Variants[1]
	if agent.Rounds != 3 {
		t.Fatalf("agent has %d repetitions compared, want 3", agent.Rounds)
	}
	var cpu bool
	for _, c := range agent.Costs {
		cpu = cpu || c.Cost == JobCPU && math.Abs(c.Value-8) < 1e-9
	}
	if !cpu {
		t.Errorf("no job CPU of 8 s for the agent: %+v", agent.Costs)
	}
}

// TestTimeToPeak checks the time to 95% of peak throughput: a closed-model
// trial whose fresh services ramp up over 4 seconds reaches its plateau
// there; one whose services ran before (restart: once) has no such cost.
func TestTimeToPeak(t *testing.T) {
	for _, started := range []bool{true, false} {
		start := time.Unix(1000, 0)
		tr := &record.Trial{Index: 1, Round: 1, Variant: "v", TargetUsers: 10, Start: start,
			MeasureStart: start.Add(2 * time.Second), MeasureEnd: start.Add(12 * time.Second),
			Services: []record.ServiceRun{{Name: "app", Measured: true, Started: started}}}
		// Completions per second from the first request (t = -2): 10, 40,
		// 70, 90, 100 … (95% of the plateau of 100 is first reached in the
		// fifth second).
		ramp := []uint64{10, 40, 70, 90, 100, 101, 99, 100, 100, 102, 98, 100}
		for i, n := range ramp {
			tr.Intervals = append(tr.Intervals, record.Interval{T: float64(i - 2), Completed: n, OK: n, Sent: n, Scheduled: n})
		}
		tc, err := SummarizeTrial(tr, Trim{})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := tc.Costs[TimeToPeak]
		if ok != started || (started && got != 5) {
			t.Errorf("started %v: time to peak %v (present %v), want 5 s only for fresh services", started, got, ok)
		}
	}
}

// TestStartupHeadline checks that a start-up experiment's headline gives
// its own costs (time to ready, CPU, memory), not a load test's, which it
// has none of ("slow: no cost compared" above a table of compared costs).
func TestStartupHeadline(t *testing.T) {
	s := startupRun(t, 2, 1)
	if len(s.Headlines) != 2 {
		t.Fatalf("%d headlines, want one per CPU limit", len(s.Headlines))
	}
	for _, h := range s.Headlines {
		if len(h.Changes) == 0 || h.Changes[0].Cost != StartupReady || !h.Changes[0].Delta.Significant {
			t.Errorf("step %d: headline changes %+v, want time to ready first, resolved", h.Step, h.Changes)
		}
	}
}
