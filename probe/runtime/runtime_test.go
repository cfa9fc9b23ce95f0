package runtime

import (
	"errors"
	"strings"
	"testing"
)

// fixed is a runtime of fixed metrics, for Set's checks; it runs nowhere.
type fixed struct {
	name    string
	metrics []Metric
}

func (f fixed) Name() string      { return f.name }
func (f fixed) Metrics() []Metric { return f.metrics }
func (f fixed) Find(string, []int) (Process, error) {
	return nil, ErrNotFound
}

func TestShownAndBase(t *testing.T) {
	tests := []struct {
		unit      Unit
		kind      Kind
		shown     string
		scale     float64
		digits    int
		base      string
		baseScale float64
	}{
		{Bytes, Gauge, "MiB", 1.0 / (1 << 20), 1, "bytes", 1 << 20},
		{Count, Gauge, "", 1, 0, "", 1},
		{Seconds, Counter, "ms/s", 1000, 2, "ratio", 1e-3},
		{Count, Counter, "/min", 60, 1, "", 1.0 / 60},
		{Seconds, AtStart, "ms", 1000, 0, "seconds", 1e-3},
	}
	for _, tt := range tests {
		m := Metric{Unit: tt.unit, Kind: tt.kind}
		unit, scale, digits := m.Shown()
		base, baseScale := m.Base()
		if unit != tt.shown || scale != tt.scale || digits != tt.digits || base != tt.base || baseScale != tt.baseScale {
			t.Errorf("%q %d: shown %q ×%v %d digits, base %q ×%v; want %q ×%v %d, %q ×%v",
				tt.unit, tt.kind, unit, scale, digits, base, baseScale, tt.shown, tt.scale, tt.digits, tt.base, tt.baseScale)
		}
	}
}

func TestSetCheck(t *testing.T) {
	ok := Metric{Name: "heap", Unit: Bytes, Kind: Gauge, Cost: "foo_heap_mib", Label: "Foo heap", Family: "toll_foo_heap_bytes", Help: "Foo heap."}
	with := func(f func(*Metric)) Metric { m := ok; f(&m); return m }
	tests := []struct {
		name string
		set  Set
		err  string
	}{
		{"well formed", Set{fixed{"foo", []Metric{ok}}}, ""},
		{"no name", Set{fixed{"", nil}}, "no name"},
		{"name twice", Set{fixed{"foo", nil}, fixed{"foo", nil}}, "used twice"},
		{"no label", Set{fixed{"foo", []Metric{with(func(m *Metric) { m.Label = "" })}}}, "lacks"},
		{"no kind", Set{fixed{"foo", []Metric{with(func(m *Metric) { m.Kind = 0 })}}}, "unknown kind"},
		{"cost of another", Set{fixed{"foo", []Metric{with(func(m *Metric) { m.Cost = "bar_heap_mib" })}}}, "does not begin"},
		{"cost twice", Set{fixed{"foo", []Metric{ok, with(func(m *Metric) { m.Name = "other" })}}}, "named twice"},
	}
	for _, tt := range tests {
		err := tt.set.Check()
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
	}
}

func TestSetMetricAndFind(t *testing.T) {
	m := Metric{Name: "heap", Cost: "foo_heap_mib"}
	s := Set{fixed{"foo", []Metric{m}}}
	if got, r, ok := s.Metric("foo_heap_mib"); !ok || got.Name != "heap" || r.Name() != "foo" {
		t.Errorf("Metric: %+v %v %v", got, r, ok)
	}
	if _, _, ok := s.Metric("rss_mib"); ok {
		t.Error("rss_mib is no runtime's metric")
	}
	if _, _, err := s.Find("/proc", []int{1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find: %v, want ErrNotFound", err)
	}
}
