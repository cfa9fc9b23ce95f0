package stats

import "math"

// TQuantileN returns the two-sided 95% Student t quantile for n values
// (n − 1 degrees of freedom, at least 1). Past 30 degrees of freedom it is
// the Cornish–Fisher expansion about the normal quantile (within 1e-5
// there), since the stopping estimate's searches call it thousands of
// times.
func TQuantileN(n int) float64 {
	nu := float64(max(n-1, 1))
	if nu < 30 {
		return TQuantile(nu)
	}
	z := ZQuantile()
	z3, z5 := z*z*z, z*z*z*z*z
	return z + (z3+z)/(4*nu) + (5*z5+16*z3+3*z)/(96*nu*nu) + (3*z5*z*z+19*z5+17*z3-15*z)/(384*nu*nu*nu)
}

// RoundsFor returns the least n ≥ nMin whose interval half-width
// t(n−1)·√(sd2/n + fixed2) is at most limit, where sd2 is the values'
// variance and fixed2 a variance of their mean that more values do not
// divide; −1 when not even maxN values reach it. It doubles from nMin,
// then bisects.
func RoundsFor(sd2, fixed2, limit float64, nMin, maxN int) int {
	ok := func(n int) bool {
		return TQuantileN(n)*math.Sqrt(sd2/float64(n)+fixed2) <= limit
	}
	if ok(nMin) {
		return nMin
	}
	lo, hi := nMin, nMin*2
	for !ok(hi) {
		if hi >= maxN {
			return -1
		}
		lo, hi = hi, min(hi*2, maxN)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
