package analyze

import (
	"reflect"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestLateArrivals checks that a trial whose load generator sent late is
// flagged late-arrivals, which leaves its costs standing (the run stays
// valid), and that the summary says how requests arrived: the process, the
// worst p99 lateness, and a release grid when there was one.
func TestLateArrivals(t *testing.T) {
	tests := []struct {
		name      string
		lateness  [2]int64 // p99 µs of the baseline's and the variant's trial
		quantumS  float64
		wantFlags int
		waitMS    float64            // toll's threads' wait to run, in each trial
		heldBy    []record.CPUHolder // who ran on the load CPUs, in each trial
		wantHeld  []LateHolder       // who ran on the load CPUs of the late trials
	}{
		{"on time", [2]int64{12, 30}, 0, 0, 0, nil, nil},
		{"on time, a kernel thread beside", [2]int64{12, 30}, 0, 0, 0, []record.CPUHolder{{Name: "kdamond.0", PID: 77, Kernel: true, MS: 80}}, nil},
		{"one trial late", [2]int64{12, LateArrivalLimit.Microseconds() + 1}, 0, 1, 0, nil, nil},
		{"late, held up by the machine", [2]int64{12, 900}, 0, 1, 12.5, nil, nil},
		{"late, a kernel thread on the load CPU", [2]int64{12, 900}, 0, 1, 12.5,
			[]record.CPUHolder{{Name: "kdamond.0", PID: 77, Kernel: true, MS: 80}, {Name: "sshd", PID: 500, MS: 2}},
			[]LateHolder{{Name: "kdamond.0", Kernel: true, Trials: 3, MedianMS: 80}, {Name: "sshd", Trials: 3, MedianMS: 2}}},
		{"a release grid", [2]int64{5, 8}, 0.002, 0, 0, nil, nil},
		{"a run from before lateness was recorded", [2]int64{0, 0}, 0.002, 0, 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "v"},
				Load: record.LoadSettings{Model: "open", Arrival: "uniform", QuantumS: tt.quantumS}}
			var trials []*record.Trial
			for r := 1; r <= 3; r++ {
				for i, v := range []string{"baseline", "v"} {
					tr := synthetic(t, 2*r+i-1, r, v, 3, 100, 0.001, 1000)
					tr.Load.LatenessP99US, tr.Load.LatenessMaxUS = tt.lateness[i], 2*tt.lateness[i]
					tr.Load.CPUWaitMS = tt.waitMS
					tr.Load.LoadCPUsHeldBy = tt.heldBy
					trials = append(trials, tr)
				}
			}
			s, err := Summarize(m, trials, Options{})
			if err != nil {
				t.Fatal(err)
			}
			late := 0
			for _, f := range s.Flags {
				if f.Code == FlagLateArrival {
					late++
					// The flag gives its lateness, the limit, the wait
					// and who ran on the load CPUs (report words them).
					a := f.Args
					if f.Variant != "v" || a.Int(0) != int(tt.lateness[1]) || a.Int(1) != int(2*tt.lateness[1]) ||
						a.Int(2) != int(LateArrivalLimit.Microseconds()) || a.Float(3) != tt.waitMS || !reflect.DeepEqual(a[4], tt.heldBy) {
						t.Errorf("flag %+v", f)
					}
				}
			}
			if late != tt.wantFlags*3 || !s.Valid() {
				t.Errorf("%d late-arrivals flags (want %d), valid %v (want true: %v)", late, tt.wantFlags*3, s.Valid(), s.Invalidities)
			}
			// The summary groups them in one line's worth: the trials and
			// the worst p99, a condition that invalidates nothing.
			switch {
			case late == 0 && len(s.FlagGroups) != 0:
				t.Errorf("flag groups %+v, want none", s.FlagGroups)
			case late > 0 && (len(s.FlagGroups) != 1 || s.FlagGroups[0].Code != FlagLateArrival || len(s.FlagGroups[0].Trials) != late ||
				s.FlagGroups[0].Of != 6 || s.FlagGroups[0].Worst == nil || *s.FlagGroups[0].Worst != float64(tt.lateness[1]) || s.FlagGroups[0].Invalidates):
				t.Errorf("flag groups %+v, want late-arrivals in %d of 6 trials, worst %d µs", s.FlagGroups, late, tt.lateness[1])
			}
			if s.Arrivals == nil {
				t.Fatal("no arrivals in the summary")
			}
			if s.Trials[1].LatenessP99US != tt.lateness[1] {
				t.Errorf("trial lateness p99 %d, want %d", s.Trials[1].LatenessP99US, tt.lateness[1])
			}
			// What the note says (report words it): the arrivals, the
			// grid, the worst lateness, the late trials and who held
			// their load CPUs.
			a := s.Arrivals
			if a.Process != "uniform" || a.GridS != tt.quantumS || a.LatenessP99US != max(tt.lateness[0], tt.lateness[1]) ||
				a.LateTrials != tt.wantFlags*3 || !reflect.DeepEqual(a.LateHeldBy, tt.wantHeld) || a.Note != "" {
				t.Errorf("arrivals %+v", a)
			}
		})
	}
	closed := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline"}, Load: record.LoadSettings{Model: "closed"}}
	if a := arrivalsOf(closed, nil, nil); a != nil {
		t.Errorf("closed model: arrivals %+v", a)
	}
}
