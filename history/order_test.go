package history

import (
	"slices"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.9.0", "1.10.0", -1},
		{"1.30.0", "1.31.0", -1},
		{"v1.31.0", "1.30.0", +1},
		{"2.0.0", "1.33.6", +1},
		{"1.47.0-rc.1", "1.47.0", -1},
		{"1.2.3", "1.2.3", 0},
		{"build-9", "build-10", -1},
		{"r007", "r8", -1},
		{"2.10", "2.9.1", +1},
		{"abc", "abd", -1},
		{"1.2", "1.2.1", -1},
	} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareVersions(c.b, c.a); got != -c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

// TestOrderByVersion orders a bisect's runs, made out of order, by their
// version, and keeps a run without one last.
func TestOrderByVersion(t *testing.T) {
	var runs []*Run
	for i, v := range []string{"1.27.0", "1.44.0", "1.31.0", "", "1.29.0", "1.30.0", "1.31.0", "1.9.0"} {
		r := &Run{ID: int64(i + 1)}
		if v != "" {
			r.Labels = map[string]string{"version": v}
		}
		runs = append(runs, r)
	}
	OrderBy(runs, "version")
	var got []int64
	for _, r := range runs {
		got = append(got, r.ID)
	}
	if want := []int64{8, 1, 5, 6, 3, 7, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
