package analyze

import (
	"fmt"
	"math"
	"testing"
)

// profiledSummary is a run of profiledRunNoise whose differential profiles
// are added, or, with profiled false, the same run without any.
func profiledSummary(t *testing.T, noise []float64, profiled bool, v profiledVariant) *Summary {
	t.Helper()
	s, trials, files := profiledRunNoise(t, noise, 100, v)
	if !profiled {
		return s
	}
	if err := AddProfiles(s, trials, readFrom(files)); err != nil {
		t.Fatal(err)
	}
	return s
}

// changeOf returns the row named name among rows, or nil.
func changeOf(rows []ProfileRowChange, name string) *ProfileRowChange {
	for i := range rows {
		if rows[i].Name == name {
			return &rows[i]
		}
	}
	return nil
}

// TestCompareRunsProfiles checks toll compare's profile section: a
// function whose added CPU per request doubled between two runs is the
// top row, with both runs' figures and a change whose interval excludes
// 0; a function that did not move reads no significant change; and a
// comparison with profiles in one run only has no profile section and says
// which run has them.
func TestCompareRunsProfiles(t *testing.T) {
	const span = "go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End"
	noiseA := []float64{1.0, 1.03, 0.97, 1.01, 0.99}
	noiseB := []float64{0.98, 1.0, 1.02, 0.99, 1.01, 1.0}
	agent := func(spanUS float64) profiledVariant {
		return profiledVariant{name: "otel", rate: 100, perUS: map[string]float64{"app.handle": 110, span: spanUS, "runtime.mallocgc": 10}}
	}
	for _, tt := range []struct {
		name               string
		spanA, spanB       float64
		profA, profB       bool
		sides              ProfileSides
		top                string  // the top function, "" for no section
		change             float64 // the top function's change, ms per request
		significant        bool
		unmovedFunction    string // a function that did not move
		unmovedOrigin      string // an origin that did not move
		wantOriginMoved    string
		wantOriginMovedBy  float64
		wantTotalChangedBy float64
	}{
		{name: "the span's cost doubled", spanA: 40, spanB: 80, profA: true, profB: true, sides: ProfilesInBoth,
			top: span, change: 0.040, significant: true, unmovedFunction: "app.handle", unmovedOrigin: OriginRuntime,
			wantOriginMoved: "agent: go.opentelemetry.io", wantOriginMovedBy: 0.040, wantTotalChangedBy: 0.040},
		{name: "the same agent", spanA: 40, spanB: 40, profA: true, profB: true, sides: ProfilesInBoth,
			top: "", unmovedFunction: span, unmovedOrigin: "agent: go.opentelemetry.io"},
		{name: "profiles in A only", spanA: 40, spanB: 80, profA: true, sides: ProfilesInAOnly},
		{name: "profiles in B only", spanA: 40, spanB: 80, profB: true, sides: ProfilesInBOnly},
		{name: "no profiles", spanA: 40, spanB: 80, sides: ProfilesInNeither},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := profiledSummary(t, noiseA, tt.profA, agent(tt.spanA))
			b := profiledSummary(t, noiseB, tt.profB, agent(tt.spanB))
			rc, err := CompareRuns(a, b)
			if err != nil {
				t.Fatal(err)
			}
			if rc.ProfilesIn != tt.sides {
				t.Errorf("profiles in %q, want %q", rc.ProfilesIn, tt.sides)
			}
			pc := rc.Steps[0].Variants[0].Profile
			if tt.sides != ProfilesInBoth {
				if pc != nil {
					t.Fatalf("a profile section with profiles in %q: %+v", tt.sides, pc)
				}
				return
			}
			if pc == nil {
				t.Fatal("no profile section with profiles in both runs")
			}
			if pc.RoundsA != 5 || pc.RoundsB != 6 || pc.FunctionsCompared != 3 {
				t.Errorf("rounds %d and %d, %d functions compared; want 5, 6 and 3", pc.RoundsA, pc.RoundsB, pc.FunctionsCompared)
			}
			if tt.top != "" {
				top := pc.Functions[0]
				if top.Name != tt.top || math.Abs(top.Change-tt.change) > 0.002 || top.Significant != tt.significant || top.CILow == nil {
					t.Errorf("top function %s: change %+.4f [%v], significant %v; want %s at %+.3f, significant %v",
						top.Name, top.Change, bounds(top), top.Significant, tt.top, tt.change, tt.significant)
				}
				if top.A == nil || top.B == nil || math.Abs(top.A.Delta-tt.spanA/1000) > 0.002 || math.Abs(top.B.Delta-tt.spanB/1000) > 0.002 ||
					top.A.CILow == nil || top.B.CILow == nil {
					t.Errorf("top function's runs: A %+v, B %+v; want Δ %.3f and %.3f with intervals", top.A, top.B, tt.spanA/1000, tt.spanB/1000)
				}
			}
			for _, u := range []struct {
				rows []ProfileRowChange
				name string
			}{{pc.Functions, tt.unmovedFunction}, {pc.Origins, tt.unmovedOrigin}} {
				r := changeOf(u.rows, u.name)
				if r == nil {
					t.Errorf("no row for %s", u.name)
					continue
				}
				if r.Significant || r.CILow == nil || math.Abs(r.Change) > 0.002 {
					t.Errorf("%s, unmoved, reads %+.4f [%v], significant %v", u.name, r.Change, bounds(*r), r.Significant)
				}
			}
			if tt.wantOriginMoved != "" {
				if o := changeOf(pc.Origins, tt.wantOriginMoved); o == nil || !o.Significant || math.Abs(o.Change-tt.wantOriginMovedBy) > 0.002 {
					t.Errorf("origin %s = %+v, want a significant %+.3f", tt.wantOriginMoved, o, tt.wantOriginMovedBy)
				}
			}
			if math.Abs(pc.Total.Change-tt.wantTotalChangedBy) > 0.002 || pc.Total.Significant != (tt.wantTotalChangedBy != 0) {
				t.Errorf("total change %+.4f, significant %v; want %+.3f", pc.Total.Change, pc.Total.Significant, tt.wantTotalChangedBy)
			}
		})
	}
}

func bounds(r ProfileRowChange) string {
	if r.CILow == nil || r.CIHigh == nil {
		return "no interval"
	}
	return fmt.Sprintf("%+.4f, %+.4f", *r.CILow, *r.CIHigh)
}

// TestProfileChangeOfRowsLeftOut checks rows that one run's ProfileDiff
// kept and the other's did not: a name absent from a run that kept every
// row had no sample there (a change from 0), and one absent from a run
// that kept only its MaxProfileRows largest has a change whose interval
// holds whatever it was there.
func TestProfileChangeOfRowsLeftOut(t *testing.T) {
	row := func(name string, delta, half float64) ProfileRow {
		lo, hi := delta-half, delta+half
		return ProfileRow{Name: name, Origin: OriginApplication, Delta: delta, CILow: &lo, CIHigh: &hi, Significant: lo > 0 || hi < 0}
	}
	full := func(extra ...ProfileRow) []ProfileRow {
		rows := extra
		for i := len(rows); i < MaxProfileRows; i++ {
			rows = append(rows, row(fmt.Sprintf("app.f%d", i), 0.010+0.001*float64(i), 0.001))
		}
		return rows
	}
	for _, tt := range []struct {
		name        string
		a, b        []ProfileRow
		bound       float64
		aNil, bNil  bool
		change      float64
		low, high   float64
		significant bool
	}{
		{name: "new in B, A kept every row", a: []ProfileRow{row("app.g", 0.01, 0.001)}, b: []ProfileRow{row("app.new", 0.05, 0.002)},
			change: 0.05, low: 0.048, high: 0.052, significant: true},
		{name: "new in B, A kept its largest", a: full(), b: []ProfileRow{row("app.new", 0.05, 0.002)},
			aNil: true, bound: 0.010, change: 0.05, low: 0.038, high: 0.062, significant: true},
		{name: "small in B, A kept its largest", a: full(), b: []ProfileRow{row("app.new", 0.004, 0.002)},
			aNil: true, bound: 0.010, change: 0.004, low: -0.008, high: 0.016},
		{name: "gone from B, B kept its largest", a: []ProfileRow{row("app.new", 0.05, 0.002)}, b: full(),
			bNil: true, bound: 0.010, change: -0.05, low: -0.062, high: -0.038, significant: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := changeOf(rowChanges(tt.a, tt.b, 5, 5, true), "app.new")
			if r == nil {
				t.Fatal("no row for app.new")
			}
			if (r.A == nil) != tt.aNil || (r.B == nil) != tt.bNil || math.Abs(r.Bound-tt.bound) > 1e-12 {
				t.Errorf("A %+v, B %+v, bound %g; want A left out %v, B left out %v, bound %g", r.A, r.B, r.Bound, tt.aNil, tt.bNil, tt.bound)
			}
			if math.Abs(r.Change-tt.change) > 1e-9 || r.CILow == nil || math.Abs(*r.CILow-tt.low) > 1e-9 || math.Abs(*r.CIHigh-tt.high) > 1e-9 || r.Significant != tt.significant {
				t.Errorf("change %+.4f [%s], significant %v; want %+.4f [%+.4f, %+.4f], %v", r.Change, bounds(*r), r.Significant, tt.change, tt.low, tt.high, tt.significant)
			}
		})
	}
}
