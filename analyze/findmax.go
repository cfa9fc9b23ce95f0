package analyze

import "github.com/tollperf/toll/record"

// FindMaxSummary is what a find-max search found, as reports show it:
// each variant's highest sustainable rate and its change against the
// baseline's. Each maximum is one measurement per rate, without an
// interval.
type FindMaxSummary struct {
	// SLOP99MS is the p99 latency a sustained rate kept, in milliseconds.
	SLOP99MS float64
	Variants []FindMaxResult
}

// FindMaxResult is one variant's search.
type FindMaxResult struct {
	record.FindMaxVariant
	// DeltaPct is MaxRate's change against the baseline's, in percent;
	// nil for the baseline, and when either found no rate it sustained.
	DeltaPct *float64
}

// SummarizeFindMax summarizes a find-max search whose baseline variant is
// baseline.
func SummarizeFindMax(f *record.FindMax, baseline string) *FindMaxSummary {
	s := &FindMaxSummary{SLOP99MS: f.SLOP99MS}
	var base float64
	for _, v := range f.Variants {
		if v.Name == baseline {
			base = v.MaxRate
		}
	}
	for _, v := range f.Variants {
		r := FindMaxResult{FindMaxVariant: v}
		if v.Name != baseline && base > 0 && v.MaxRate > 0 {
			d := 100 * (v.MaxRate/base - 1)
			r.DeltaPct = &d
		}
		s.Variants = append(s.Variants, r)
	}
	return s
}
