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

// WithinGroups returns the variance that the groups' own spread puts into
// the mean of their means: each group's spread, pooled over the groups,
// over its number of values, averaged over the groups and divided by
// their number. The spread is read over pairs of consecutive values (an
// odd last value left out), whose means hold still where a quantity comes
// in alternate values, which the values' own spread would count as noise.
// ok is false, and v 0, when a group has fewer than two values or none has
// two pairs.
func WithinGroups(groups [][]float64) (v float64, ok bool) {
	var ss, df, inv float64
	for _, ys := range groups {
		pairs := len(ys) / 2
		if pairs == 0 {
			return 0, false
		}
		inv += 1 / float64(pairs)
		means := make([]float64, pairs)
		for j := range means {
			means[j] = (ys[2*j] + ys[2*j+1]) / 2
		}
		m := Mean(means)
		for _, b := range means {
			ss += (b - m) * (b - m)
		}
		df += float64(pairs - 1)
	}
	if df == 0 {
		return 0, false
	}
	k := float64(len(groups))
	return ss / df * inv / (k * k), true
}
