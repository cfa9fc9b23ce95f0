package history

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tollperf/toll/changepoint"
)

// realRuns reads testdata/aa-go3.csv: twenty real runs of one service,
// each variant's change in CPU per request with its interval.
func realRuns(t *testing.T, variant string) []Point {
	t.Helper()
	data, err := os.ReadFile("testdata/aa-go3.csv")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []Point
	for _, r := range rows[1:] {
		if r[1] != variant {
			continue
		}
		var f [3]float64
		for i := range f {
			if f[i], err = strconv.ParseFloat(r[2+i], 64); err != nil {
				t.Fatal(err)
			}
		}
		lo, hi := f[1], f[2]
		out = append(out, Point{Change: f[0], Low: &lo, High: &hi})
	}
	if len(out) != 20 {
		t.Fatalf("%d runs of %s in testdata, want 20", len(out), variant)
	}
	return out
}

// history draws n of the real runs in a random order into a series, each
// from run at on moved by step (a ratio: 1.03 is +3%).
func historyOf(rng *rand.Rand, real []Point, n, at int, step float64) *Series {
	s := &Series{Unit: "%"}
	for i, k := range rng.Perm(len(real))[:n] {
		p := real[k]
		f := func(v float64) float64 {
			if at > 0 && i >= at {
				return ((1+v/100)*step - 1) * 100
			}
			return v
		}
		lo, hi := f(*p.Low), f(*p.High)
		s.Points = append(s.Points, Point{Run: int64(i + 1), Started: fmt.Sprint(i), Change: f(p.Change), Low: &lo, High: &hi})
	}
	return s
}

// TestRealHistories checks the change points on histories made of real
// runs where nothing changed (an identical twin, and a variant with a
// constant added cost), 20 histories of 15 runs each drawn from the twenty
// real runs: at most one false alarm; and a +3% step injected at a known
// run of the twin's histories: found at that run, its interval holding
// +3%.
func TestRealHistories(t *testing.T) {
	for _, variant := range []string{"twin", "plus30"} {
		real := realRuns(t, variant)
		rng := rand.New(rand.NewPCG(11, 12))
		alarms, found := 0, 0
		for h := range 20 {
			s := historyOf(rng, real, 15, 0, 1)
			if cs := s.detect(changepoint.Options{Seed: uint64(h)}); len(cs) > 0 {
				alarms++
			}
			at := 5 + h%6
			s = historyOf(rng, real, 15, at, 1.03)
			cs := s.detect(changepoint.Options{Seed: uint64(h)})
			if len(cs) == 1 && cs[0].Index == at && cs[0].Low < 3 && cs[0].High > 3 {
				found++
			} else {
				t.Logf("%s: +3%% at run %d of history %d: found %+v", variant, at, h, cs)
			}
		}
		t.Logf("%s: %d false alarms in 20 histories of 15 real runs; +3%% step found at its run in %d of 20", variant, alarms, found)
		if alarms > 1 {
			t.Errorf("%s: %d false alarms in 20 histories where nothing changed", variant, alarms)
		}
		if variant == "twin" && found < 15 {
			t.Errorf("%s: a +3%% step found at its run, with an interval that holds it, in %d of 20 histories", variant, found)
		}
	}
}
