package stats

// BetweenGroups estimates the variance that the groups themselves add to
// their values, beyond what each group's own spread puts into its mean:
// the variance of the groups' means less the mean of their squared
// standard errors (one-way random effects, the method of moments), at
// least 0. Groups of fewer than two values are passed over; ok is false
// when fewer than two groups remain.
func BetweenGroups(groups [][]float64) (v float64, ok bool) {
	var means []float64
	var within float64 // the mean of the groups' squared standard errors
	for _, ys := range groups {
		if len(ys) < 2 {
			continue
		}
		means = append(means, Mean(ys))
		within += Variance(ys) / float64(len(ys))
	}
	if len(means) < 2 {
		return 0, false
	}
	within /= float64(len(means))
	return max(Variance(means)-within, 0), true
}
