package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/tollperf/toll/stats"
)

// MaxProfileChangeRows is how many functions, packages and origins a
// ProfileChange keeps: those whose added CPU per request moved most.
const MaxProfileChangeRows = 10

// ProfileSides says which of two compared runs have differential profiles.
type ProfileSides string

// Which runs of a comparison have profiles.
const (
	ProfilesInNeither ProfileSides = ""
	ProfilesInBoth    ProfileSides = "both"
	ProfilesInAOnly   ProfileSides = "a"
	ProfilesInBOnly   ProfileSides = "b"
)

// ProfileChange is how one variant's added CPU per request, by function,
// package and origin, moved between two runs at one load step: each run's
// ProfileDiff row side by side, and the change of B's against A's.
type ProfileChange struct {
	// RoundsA and RoundsB are the paired rounds each run's differences
	// are over.
	RoundsA int `json:"rounds_a"`
	RoundsB int `json:"rounds_b"`
	// Total is the profiled total's change.
	Total ProfileRowChange `json:"total"`
	// Functions, Packages and Origins are the MaxProfileChangeRows rows
	// whose Change is largest either way, largest first.
	Functions []ProfileRowChange `json:"functions"`
	Packages  []ProfileRowChange `json:"packages"`
	Origins   []ProfileRowChange `json:"origins"`
	// FunctionsCompared is how many functions were compared, of which
	// Functions are the largest changes: at 95% each, about one in twenty
	// reads significant by chance.
	FunctionsCompared int `json:"functions_compared"`
	// Charged, ChargedPackages and Causes are the same for ProfileDiff's
	// rows of the code that asked for the work, and ChargedCompared how
	// many functions Charged's are the largest changes of.
	Charged         []ProfileRowChange `json:"charged"`
	ChargedPackages []ProfileRowChange `json:"charged_packages"`
	Causes          []ProfileRowChange `json:"causes"`
	ChargedCompared int                `json:"charged_compared"`
}

// ProfileRowChange is one function's (package's, origin's) added CPU per
// request in run A and in run B, in ms, and its change B − A with a 95%
// interval.
type ProfileRowChange struct {
	Name   string `json:"name"`
	Origin string `json:"origin"`
	// A and B are the row in each run. A run in which the name had no
	// sample on either side reads a row of zeros, as its ProfileDiff
	// would; nil where the run's ProfileDiff kept MaxProfileRows rows and
	// not this one, whose Delta there lies within ±Bound.
	A *ProfileRow `json:"a"`
	B *ProfileRow `json:"b"`
	// Bound is, for a row one run left out (A or B nil), the largest
	// |Delta| it can have there: the smallest that run kept.
	Bound float64 `json:"bound_ms,omitempty"`
	// Change is B's Delta minus A's (a side left out counted as 0), with
	// its 95% interval (absent when a run has a single round).
	Change float64  `json:"change_ms"`
	CILow  *float64 `json:"ci_low_ms,omitempty"`
	CIHigh *float64 `json:"ci_high_ms,omitempty"`
	// Significant is set when the interval excludes zero.
	Significant bool `json:"significant"`
	// Direction is where the interval lies against no change, and
	// HalfWidth half its width in ms (absent without an interval).
	Direction Direction `json:"direction,omitempty"`
	HalfWidth *float64  `json:"half_width_ms,omitempty"`
}

// profileSides says which of a and b have differential profiles.
func profileSides(a, b *Summary) ProfileSides {
	switch pa, pb := len(a.Profiles) > 0, len(b.Profiles) > 0; {
	case pa && pb:
		return ProfilesInBoth
	case pa:
		return ProfilesInAOnly
	case pb:
		return ProfilesInBOnly
	}
	return ProfilesInNeither
}

// profileDiffOf returns s's ProfileDiff of variant at step index step.
func profileDiffOf(s *Summary, step int, variant string) (ProfileDiff, bool) {
	for _, d := range s.Profiles {
		if d.Step == step && d.Variant == variant {
			return d, true
		}
	}
	return ProfileDiff{}, false
}

// compareProfiles compares a variant's differential profiles of two runs,
// da of run A and db of run B.
//
// The two runs are independent: their rounds ran at different times, on
// services started apart, and round i of A has nothing in common with round
// i of B. So nothing pairs them, and the change's variance is the sum of
// the two differences' squared standard errors, each read back from its
// run's paired t interval; its degrees of freedom follow Welch and
// Satterthwaite. Pairing the runs' rounds would claim a covariance they do
// not have. Unlike CompareRuns' overheads, what each run held fixed adds
// nothing here: each ProfileDiff is already a difference against its own
// run's baseline, on the same machine at the same time.
func compareProfiles(da, db ProfileDiff) *ProfileChange {
	pc := &ProfileChange{RoundsA: da.Rounds, RoundsB: db.Rounds}
	ta, tb := da.Total, db.Total
	pc.Total = rowChange("total", &ta, &tb, 0, da.Rounds, db.Rounds)
	pc.Functions = rowChanges(da.Functions, db.Functions, da.Rounds, db.Rounds, true)
	pc.FunctionsCompared = len(pc.Functions)
	pc.Functions = topChanges(pc.Functions)
	pc.Packages = topChanges(rowChanges(da.Packages, db.Packages, da.Rounds, db.Rounds, true))
	pc.Origins = topChanges(rowChanges(da.Origins, db.Origins, da.Rounds, db.Rounds, false))
	pc.Charged = rowChanges(da.Charged, db.Charged, da.Rounds, db.Rounds, true)
	pc.ChargedCompared = len(pc.Charged)
	pc.Charged = topChanges(pc.Charged)
	pc.ChargedPackages = topChanges(rowChanges(da.ChargedPackages, db.ChargedPackages, da.Rounds, db.Rounds, true))
	pc.Causes = topChanges(rowChanges(da.Causes, db.Causes, da.Rounds, db.Rounds, false))
	return pc
}

// rowChanges compares every name of as and bs, the rows of runs A and B
// over na and nb rounds. A name one run has no row for had no sample there,
// unless capped is set and that run kept MaxProfileRows rows: then it was
// left out among smaller changes.
func rowChanges(as, bs []ProfileRow, na, nb int, capped bool) []ProfileRowChange {
	byName := func(rows []ProfileRow) map[string]ProfileRow {
		m := make(map[string]ProfileRow, len(rows))
		for _, r := range rows {
			m[r.Name] = r
		}
		return m
	}
	ma, mb := byName(as), byName(bs)
	// cut is the largest |Delta| of a row a run left out; -1 when it left
	// none out.
	cut := func(rows []ProfileRow) float64 {
		if !capped || len(rows) < MaxProfileRows {
			return -1
		}
		c := math.Inf(1)
		for _, r := range rows {
			c = min(c, math.Abs(r.Delta))
		}
		return c
	}
	ca, cb := cut(as), cut(bs)
	var names []string
	for _, r := range as {
		names = append(names, r.Name)
	}
	for _, r := range bs {
		if _, ok := ma[r.Name]; !ok {
			names = append(names, r.Name)
		}
	}
	// side is one run's row of a name: its own, a row of zeros when the
	// run left nothing out, or none and the bound of what it left out.
	side := func(r ProfileRow, ok bool, cut float64, other ProfileRow, n int) (*ProfileRow, float64) {
		switch {
		case ok:
			return &r, 0
		case cut < 0:
			return zeroRow(other, n), 0
		}
		return nil, cut
	}
	var out []ProfileRowChange
	for _, n := range names {
		ra, oka := ma[n]
		rb, okb := mb[n]
		a, boundA := side(ra, oka, ca, rb, na)
		b, boundB := side(rb, okb, cb, ra, nb)
		// A name is in at least one run, so at most one bound is set.
		out = append(out, rowChange(n, a, b, max(boundA, boundB), na, nb))
	}
	return out
}

// zeroRow is the row of a name that had no sample on either side of a run
// of n paired rounds, named as other is: what its ProfileDiff would hold.
func zeroRow(other ProfileRow, n int) *ProfileRow {
	r := ProfileRow{Name: other.Name, Origin: other.Origin}
	if n >= 2 {
		var zero float64
		lo, hi := zero, zero
		r.CILow, r.CIHigh = &lo, &hi
	}
	r.Settle()
	return &r
}

// rowChange is the change of a row from a (of na rounds) to b (of nb): one
// of them nil when its run left the row out, its Delta then within ±bound.
func rowChange(name string, a, b *ProfileRow, bound float64, na, nb int) ProfileRowChange {
	rc := ProfileRowChange{Name: name, A: a, B: b}
	if b != nil {
		rc.Origin = b.Origin
	} else {
		rc.Origin = a.Origin
	}
	if a == nil || b == nil {
		rc.Bound = bound
	}
	var da, db float64
	if a != nil {
		da = a.Delta
	}
	if b != nil {
		db = b.Delta
	}
	rc.Change = db - da
	lo, hi, ok := changeInterval(a, b, bound, na, nb)
	if !ok {
		return rc
	}
	rc.CILow, rc.CIHigh = &lo, &hi
	rc.Significant = lo > 0 || hi < 0
	rc.Settle()
	return rc
}

// changeInterval returns the 95% interval of b.Delta − a.Delta, from each
// row's own interval over its run's rounds (see compareProfiles); false
// when a row has none. When one row is nil, its run left it out with a
// Delta within ±bound: the interval is the other row's, widened by bound
// on both sides, which holds the change whatever that Delta was.
func changeInterval(a, b *ProfileRow, bound float64, na, nb int) (lo, hi float64, ok bool) {
	has := func(r *ProfileRow) bool { return r == nil || r.CILow != nil && r.CIHigh != nil }
	if a == nil && b == nil || !has(a) || !has(b) {
		return 0, 0, false
	}
	switch {
	case a == nil:
		return *b.CILow - bound, *b.CIHigh + bound, true
	case b == nil:
		return -*a.CIHigh - bound, -*a.CILow + bound, true
	}
	// Each row's interval is Delta ± t(0.975, n−1)·se.
	lo, hi = stats.DiffOfIntervals(a.Delta, *a.CILow, *a.CIHigh, na, b.Delta, *b.CILow, *b.CIHigh, nb)
	return lo, hi, true
}

// topChanges returns the MaxProfileChangeRows rows of rows whose Change is
// largest either way, largest first (by name among equals).
func topChanges(rows []ProfileRowChange) []ProfileRowChange {
	slices.SortFunc(rows, func(x, y ProfileRowChange) int {
		if c := cmp.Compare(math.Abs(y.Change), math.Abs(x.Change)); c != 0 {
			return c
		}
		return cmp.Compare(x.Name, y.Name)
	})
	if len(rows) > MaxProfileChangeRows {
		rows = rows[:MaxProfileChangeRows]
	}
	if rows == nil {
		rows = []ProfileRowChange{}
	}
	return rows
}
