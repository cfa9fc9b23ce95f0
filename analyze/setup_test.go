package analyze

import (
	"slices"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestSetupWarnings checks that a run warns when its measured JVMs did not
// all run one garbage collector, naming which variants and starts ran
// which, and is silent where they did, or where only a service that is not
// measured differed.
func TestSetupWarnings(t *testing.T) {
	// trial builds a trial of variant v under start launch whose measured
	// service "svc" ran collector gc and whose load service "db" ran dbGC.
	trial := func(v string, launch int, gc, dbGC string) *record.Trial {
		tr := synthetic(t, 1, 1, v, 3, 100, 0.001, 1000)
		tr.Launch = launch
		tr.Services = append(tr.Services, record.ServiceRun{Name: "db"})
		db := record.ServiceSeries{Service: "db", Points: slices.Clone(tr.Samples[0].Points)}
		tr.Samples = append(tr.Samples, db)
		for i, s := range []string{gc, dbGC} {
			pts := slices.Clone(tr.Samples[i].Points)
			for j := range pts {
				if j == 0 {
					continue // the first reading before the JVM was found
				}
				pts[j].Runtimes = []record.RuntimeSample{{Runtime: "jvm", Values: map[string]float64{"threads": 20},
					Setup: map[string]string{"gc": s}}}
			}
			tr.Samples[i].Points = pts
		}
		return tr
	}
	for _, c := range []struct {
		name   string
		trials []*record.Trial
		want   Args // nil: no warning
	}{
		{"one collector", []*record.Trial{
			trial("baseline", 0, "Serial", "G1"), trial("agent", 0, "Serial", "G1"),
			trial("baseline", 1, "Serial", "Serial"), trial("agent", 1, "Serial", "Serial"),
		}, nil},
		{"a later start on another", []*record.Trial{
			trial("baseline", 0, "Serial", "G1"), trial("agent", 0, "Serial", "G1"),
			trial("baseline", 1, "G1", "G1"), trial("agent", 1, "G1", "G1"),
			trial("baseline", 2, "G1", "G1"),
		}, Args{"svc", "gc", "G1", []string{"agent", "baseline", "baseline"}, []int{2, 2, 3},
			"Serial", []string{"agent", "baseline"}, []int{1, 1}}},
		{"a variant that names one, one start", []*record.Trial{
			trial("baseline", 0, "Serial", "G1"), trial("agent", 0, "Parallel", "G1"),
			trial("baseline", 0, "Serial", "G1"),
		}, Args{"svc", "gc", "Parallel", []string{"agent"}, []int{0},
			"Serial", []string{"baseline"}, []int{0}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := setupWarnings(c.trials)
			if c.want == nil {
				if len(ws) != 0 {
					t.Fatalf("warnings %+v, want none", ws)
				}
				return
			}
			if len(ws) != 1 || ws[0].Code != WarnSetupsDiffer {
				t.Fatalf("warnings %+v, want one %s", ws, WarnSetupsDiffer)
			}
			got := ws[0].Args
			if len(got) != len(c.want) {
				t.Fatalf("args %v, want %v", got, c.want)
			}
			for i := range got {
				if !equalArg(got[i], c.want[i]) {
					t.Errorf("arg %d: %v, want %v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// equalArg compares two warning arguments of the kinds setupWarnings
// gives.
func equalArg(a, b any) bool {
	switch x := a.(type) {
	case []string:
		y, ok := b.([]string)
		return ok && slices.Equal(x, y)
	case []int:
		y, ok := b.([]int)
		return ok && slices.Equal(x, y)
	}
	return a == b
}
