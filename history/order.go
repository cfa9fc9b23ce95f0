package history

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/mod/semver"
)

// OrderBy orders runs by the value of their label key, as versions are
// ordered, rather than by when they started: a bisect runs its versions
// out of order, and a release measured again later belongs where its
// version does. Semantic versions (with or without their v) go by their
// precedence, 1.47.0-rc.1 before 1.47.0; other values by their numbers
// and words in turn, 1.9 before 1.10. Runs with alike values, and the
// runs without the label, which go last, keep the order given.
func OrderBy(runs []*Run, key string) {
	slices.SortStableFunc(runs, func(a, b *Run) int {
		va, oka := a.Labels[key]
		vb, okb := b.Labels[key]
		if !oka || !okb {
			return cmpBool(oka, okb)
		}
		return CompareVersions(va, vb)
	})
}

// cmpBool orders true before false.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// CompareVersions compares two versions as OrderBy orders them: -1 when
// a comes first, +1 when b does, 0 when they are alike.
func CompareVersions(a, b string) int {
	sa, sb := withV(a), withV(b)
	if semver.IsValid(sa) && semver.IsValid(sb) {
		if c := semver.Compare(sa, sb); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	return compareNatural(a, b)
}

// withV returns s with the v semver wants in front.
func withV(s string) string {
	if strings.HasPrefix(s, "v") {
		return s
	}
	return "v" + s
}

// compareNatural compares a and b a run of digits or of other characters
// at a time: runs of digits by their numbers, others as text, and a value
// that ends first before one that goes on.
func compareNatural(a, b string) int {
	for a != "" && b != "" {
		ca, ra := chunk(a)
		cb, rb := chunk(b)
		if c := compareChunks(ca, cb); c != 0 {
			return c
		}
		a, b = ra, rb
	}
	return cmp.Compare(len(a), len(b))
}

// chunk splits s after its first run of digits, or of other characters.
func chunk(s string) (head, rest string) {
	digit := unicode.IsDigit(rune(s[0]))
	i := 1
	for i < len(s) && unicode.IsDigit(rune(s[i])) == digit {
		i++
	}
	return s[:i], s[i:]
}

// compareChunks compares two runs: numbers by value (leading zeros
// aside), and anything else as text.
func compareChunks(a, b string) int {
	if unicode.IsDigit(rune(a[0])) && unicode.IsDigit(rune(b[0])) {
		ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		return cmp.Or(cmp.Compare(len(ta), len(tb)), cmp.Compare(ta, tb))
	}
	return cmp.Compare(a, b)
}
