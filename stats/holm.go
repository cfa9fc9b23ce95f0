package stats

import "sort"

// Holm returns, for each of the p-values ps, whether its test still
// rejects its null hypothesis once corrected by Holm's step-down method
// (Holm 1979) for the number of tests, keeping the chance of any false
// rejection among them at alpha: sorted by p-value (ties in their given
// order), the i-th smallest (from 0) of m rejects while its p-value is at
// most alpha / (m − i) and every smaller one's did.
func Holm(ps []float64, alpha float64) []bool {
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return ps[order[i]] < ps[order[j]] })
	out := make([]bool, len(ps))
	for i, k := range order {
		if ps[k] > alpha/float64(len(ps)-i) {
			break
		}
		out[k] = true
	}
	return out
}
