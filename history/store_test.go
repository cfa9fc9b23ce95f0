package history

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tollperf/toll/changepoint"
)

// run is a run of scenario s started at minute i, on machine m, whose
// variant "agent" reads pct% more CPU per request than the baseline,
// ±half.
func run(i int, m Machine, pct, half float64, labels map[string]string) *Run {
	lo, hi := pct-half, pct+half
	return &Run{Scenario: "s", Started: time.Date(2026, 12, 1, 0, i, 0, 0, time.UTC), Seed: int64(i), Recorded: time.Now(),
		Dir: fmt.Sprintf("results/%d", i), TollVersion: "test", Machine: m, Labels: labels, Valid: true,
		Estimates: []Estimate{{Step: "300 req/s", Variant: "agent", Cost: "cpu_per_request_ms", Label: "CPU per request", Unit: "ms",
			Method: "log-ratio", Value: 0.3 * (1 + pct/100), Baseline: 0.3, Change: &pct, Low: &lo, High: &hi, Rounds: 10}}}
}

var vm = Machine{CPUModel: "AMD EPYC", Cores: 2, Kernel: "6.18", Cgroup: "v1"}

// openTemp opens a SQLite history in a fresh directory.
func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "history.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// TestAddAndRead checks that a run and its estimates read back as added,
// that adding it again adds nothing, and that labels filter runs.
func TestAddAndRead(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	r := run(1, vm, 7.5, 1, map[string]string{"agent": "2.10.0"})
	if _, err := s.Add(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, run(1, vm, 7.5, 1, nil)); !errors.Is(err, ErrRecorded) {
		t.Errorf("adding the run again: %v, want ErrRecorded", err)
	}
	if _, err := s.Add(ctx, run(2, vm, 8, 1, map[string]string{"agent": "2.11.0"})); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A second opening of the file finds what the first wrote.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	runs, err := s2.Runs(ctx, Filter{Scenario: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Labels["agent"] != "2.10.0" || len(runs[0].Estimates) != 1 || *runs[0].Estimates[0].Change != 7.5 ||
		!runs[0].Started.Equal(r.Started) || runs[0].Machine != vm {
		t.Fatalf("runs read back: %+v", runs)
	}
	runs, _ = s2.Runs(ctx, Filter{Labels: map[string]string{"agent": "2.11.0"}})
	if len(runs) != 1 || runs[0].Seed != 2 {
		t.Errorf("filtered by label: %+v", runs)
	}
	if runs, _ := s2.Runs(ctx, Filter{Scenario: "other"}); len(runs) != 0 {
		t.Errorf("another scenario's runs: %+v", runs)
	}
}

// TestConcurrentWriters checks that runs recorded at once through
// separate openings of one file (as two toll processes do) are all kept.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	_, path := openTemp(t)
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := range each {
				if _, err := s.Add(ctx, run(w*each+i, vm, 5, 1, nil)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx, Filter{})
	if err != nil || len(runs) != writers*each {
		t.Errorf("%d runs kept of %d (%v)", len(runs), writers*each, err)
	}
}

// TestTrendsFindTheRelease checks that a series of runs whose agent grew
// 3% more expensive at one release reads a change at that run, naming the
// label that changed, and that a run of another machine is in a series of
// its own.
func TestTrendsFindTheRelease(t *testing.T) {
	var runs []*Run
	for i := range 12 {
		pct, v := 7.0, "1.0"
		if i >= 6 {
			pct, v = 7*1.03+3, "1.1" // (1.07·1.03 − 1) = +10.2%
		}
		r := run(i, vm, pct+0.3*math.Sin(float64(i)), 0.8, map[string]string{"agent": v, "n": fmt.Sprint(i)})
		r.ID = int64(i + 1)
		runs = append(runs, r)
	}
	other := run(20, Machine{CPUModel: "Intel Xeon", Cores: 8, Kernel: "6.1", Cgroup: "v2"}, 30, 1, nil)
	runs = append(runs, other)
	ss := Trends(runs, changepoint.Options{Seed: 1})
	if len(ss) != 2 {
		t.Fatalf("%d series, want 2 (one per machine)", len(ss))
	}
	s := ss[0]
	if len(s.Points) != 12 || len(s.Changes) != 1 {
		t.Fatalf("series %+v", s)
	}
	c := s.Changes[0]
	if c.Index != 6 || c.Labels["agent"] != [2]string{"1.0", "1.1"} || c.Low > 3 || c.High < 3 {
		t.Errorf("change %+v, want at run 6, agent 1.0 → 1.1, +3%% within its interval", c)
	}
	if sh, ok := s.Newest(); !ok || sh.Beyond(2) || sh.Beyond(-2) {
		t.Errorf("the newest run, at the new level, reads %+v (ok %v)", sh, ok)
	}
}

// TestNewestStartsAChange checks the CI question on a history whose last
// run is 5% above a steady level: it lies beyond +2%, and not beyond +8%.
func TestNewestStartsAChange(t *testing.T) {
	var runs []*Run
	for i := range 8 {
		pct := 7.0 + 0.2*math.Cos(float64(i))
		if i == 7 {
			pct = 1.07*1.05*100 - 100
		}
		runs = append(runs, run(i, vm, pct, 0.8, nil))
	}
	s := Trends(runs, changepoint.Options{Seed: 1})[0]
	sh, ok := s.Newest()
	if !ok || !sh.Beyond(2) || sh.Beyond(8) || sh.Index != 7 {
		t.Errorf("newest %+v (ok %v), want +5%% beyond +2%% and not +8%%", sh, ok)
	}
}

// TestPostgres runs the store's tests against a PostgreSQL server when
// TOLL_TEST_POSTGRES names one (scripts/postgres.sh starts one).
func TestPostgres(t *testing.T) {
	url := os.Getenv("TOLL_TEST_POSTGRES")
	if url == "" {
		t.Skip("TOLL_TEST_POSTGRES is not set: scripts/postgres.sh starts a server and prints it")
	}
	ctx := context.Background()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	scenario := fmt.Sprintf("pg-%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := range 5 {
				r := run(w*5+i, vm, 5, 1, map[string]string{"w": fmt.Sprint(w)})
				r.Scenario = scenario
				if _, err := s.Add(ctx, r); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	runs, err := s.Runs(ctx, Filter{Scenario: scenario})
	if err != nil || len(runs) != 20 || len(runs[0].Estimates) != 1 {
		t.Fatalf("%d runs kept of 20 (%v)", len(runs), err)
	}
	r := run(0, vm, 5, 1, nil)
	r.Scenario = scenario
	if _, err := s.Add(ctx, r); !errors.Is(err, ErrRecorded) {
		t.Errorf("adding a run again: %v", err)
	}
}
