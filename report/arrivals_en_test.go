package report

import (
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
)

// TestArrivalsNoteWords checks the English note on how a run's requests
// arrived: the process, a release grid, the worst lateness, the trials
// flagged late and who ran on their load CPUs.
func TestArrivalsNoteWords(t *testing.T) {
	held := []analyze.LateHolder{{Name: "kdamond.0", Kernel: true, Trials: 3, MedianMS: 80}, {Name: "sshd", Trials: 3, MedianMS: 2.2}}
	tests := []struct {
		name    string
		a       analyze.Arrivals
		want    []string
		notSaid []string
	}{
		{"on time", analyze.Arrivals{Process: "uniform", LatenessP99US: 30},
			[]string{"Arrivals: uniform, each request sent at its own time; the load generator's send lateness was at most 30 µs at p99 in any trial."}, []string{"release grid", "flagged"}},
		{"late", analyze.Arrivals{Process: "uniform", LatenessP99US: 101, LateTrials: 3},
			[]string{"3 trial(s) above 100 µs are flagged late-arrivals", "their CPU costs stand"}, []string{"release grid", "On the load CPUs"}},
		{"late, a kernel thread on the load CPU", analyze.Arrivals{Process: "poisson", LatenessP99US: 900, LateTrials: 3, LateHeldBy: held},
			[]string{"Arrivals: poisson,", "On the load CPUs ran, during those trials' loads: kdamond.0 (in every one, a kernel thread; 80 ms in the median one), sshd (in every one; 2 ms in the median one)."}, nil},
		{"late in some", analyze.Arrivals{Process: "uniform", LatenessP99US: 900, LateTrials: 4, LateHeldBy: held[1:]}, []string{"sshd (in 3 of 4; 2 ms"}, nil},
		{"a release grid", analyze.Arrivals{Process: "uniform", GridS: 0.002, LatenessP99US: 8},
			[]string{"Latency was measured with a release grid of 2ms", "released on a grid of 2ms"}, nil},
		{"before lateness was recorded", analyze.Arrivals{Process: "uniform", GridS: 0.002},
			[]string{"release grid of 2ms", "send lateness was not recorded."}, []string{"at most 0"}},
		{"read back", analyze.Arrivals{Process: "uniform", Note: "as written"}, []string{"as written"}, []string{"Arrivals:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ArrivalsNote(&tt.a)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("note %q lacks %q", got, w)
				}
			}
			for _, w := range tt.notSaid {
				if strings.Contains(got, w) {
					t.Errorf("note %q says %q", got, w)
				}
			}
		})
	}
}
