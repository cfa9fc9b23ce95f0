package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
)

// profiledSummary is a run at 100 req/s of the baseline and otel whose
// differential profile reads, per function, the added CPU per request
// given (ms) with a 95% interval of ±half; nil deltas: a run without
// profiles.
func profiledSummary(deltas map[string]float64, half float64) *analyze.Summary {
	s := &analyze.Summary{Baseline: "baseline", Variants: []string{"baseline", "otel"},
		Steps: []analyze.Step{{Index: 0, Rate: 100, Variants: []analyze.VariantResult{{Name: "baseline"}, {Name: "otel"}}}}}
	if deltas == nil {
		return s
	}
	row := func(name, origin string, delta float64) analyze.ProfileRow {
		lo, hi := delta-half, delta+half
		r := analyze.ProfileRow{Name: name, Origin: origin, Baseline: 0.1, Variant: 0.1 + delta, Delta: delta, CILow: &lo, CIHigh: &hi, Significant: lo > 0 || hi < 0}
		r.Settle()
		return r
	}
	d := analyze.ProfileDiff{Step: 0, Variant: "otel", Rounds: 5}
	var total float64
	for name, delta := range deltas {
		origin := analyze.OriginApplication
		if strings.HasPrefix(name, "go.opentelemetry.io/") {
			origin = analyze.OriginAgent + "go.opentelemetry.io"
		}
		d.Functions = append(d.Functions, row(name, origin, delta))
		d.Packages = append(d.Packages, row(name[:strings.LastIndex(name, ".")], origin, delta))
		d.Origins = append(d.Origins, row(origin, origin, delta))
		total += delta
	}
	d.Total = row("total", "", total)
	s.Profiles = []analyze.ProfileDiff{d}
	return s
}

// TestCompareProfiles checks toll compare's profile section in the text,
// Markdown and JSON: the function whose added CPU per request doubled is
// the top row with both runs' figures and a change that reads as one, an
// unmoved function reads "~", and with profiles in one run only there is
// no section and one line says which run has them.
func TestCompareProfiles(t *testing.T) {
	const span = "go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End"
	profiled := func(spanMS float64) *analyze.Summary {
		return profiledSummary(map[string]float64{span: spanMS, "app.handle": 0.010}, 0.002)
	}
	for _, tt := range []struct {
		name     string
		a, b     *analyze.Summary
		section  bool
		note     string // a line the text and the Markdown hold
		noteless bool   // no profile note at all
	}{
		{name: "the span's cost doubled", a: profiled(0.040), b: profiled(0.080), section: true, note: "the runs are independent"},
		{name: "profiles in A only", a: profiled(0.040), b: profiledSummary(nil, 0), note: "Profiles are in run A only"},
		{name: "profiles in B only", a: profiledSummary(nil, 0), b: profiled(0.080), note: "Profiles are in run B only"},
		{name: "no profiles", a: profiledSummary(nil, 0), b: profiledSummary(nil, 0), noteless: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := analyze.CompareRuns(tt.a, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			var text, md, js bytes.Buffer
			if err := CompareText(&text, rc, "a", "b"); err != nil {
				t.Fatal(err)
			}
			if err := CompareMarkdown(&md, rc, "a", "b", nil); err != nil {
				t.Fatal(err)
			}
			if err := CompareJSON(&js, rc, "a", "b", nil); err != nil {
				t.Fatal(err)
			}
			for _, out := range []struct {
				name, text, rowStart, span string
			}{{"text", text.String(), "  ", span}, {"markdown", md.String(), "| ", escape(span)}} {
				title := "Where otel's added CPU per request moved at 100 req/s"
				if got := strings.Contains(out.text, title); got != tt.section {
					t.Errorf("%s: a profile section %v, want %v:\n%s", out.name, got, tt.section, out.text)
				}
				if tt.note != "" && strings.Count(out.text, tt.note) != 1 {
					t.Errorf("%s: %q not said once:\n%s", out.name, tt.note, out.text)
				}
				if tt.noteless && strings.Contains(out.text, "rofile") {
					t.Errorf("%s: speaks of profiles with none in either run:\n%s", out.name, out.text)
				}
				if !tt.section {
					continue
				}
				// The fixture has rows of own CPU only.
				own := "By the function sampled: otel at 100 req/s"
				lines := strings.Split(out.text[strings.Index(out.text, own):], "\n")
				var rows []string
				for _, l := range lines[1:] {
					if strings.HasPrefix(l, out.rowStart+"function") || strings.HasPrefix(l, out.rowStart+"---") || strings.HasPrefix(l, "| ---") || strings.HasPrefix(l, "  ─") || l == "" {
						continue
					}
					if strings.Contains(l, "total profiled") {
						break
					}
					rows = append(rows, l)
				}
				if len(rows) != 2 || !strings.HasPrefix(rows[0], out.rowStart+out.span) {
					t.Fatalf("%s: function rows %q, want the span's first", out.name, rows)
				}
				for _, want := range []string{"+0.0400 ± 0.0020", "+0.0800 ± 0.0020", "+0.0400 ± 0.0"} {
					if !strings.Contains(rows[0], want) {
						t.Errorf("%s: the span's row %q lacks %q", out.name, rows[0], want)
					}
				}
				if strings.Contains(rows[0], "~") {
					t.Errorf("%s: the span's doubled cost reads as no change: %q", out.name, rows[0])
				}
				if !strings.Contains(rows[1], "app.handle") || !strings.Contains(rows[1], "~ (") {
					t.Errorf("%s: unmoved app.handle's row %q does not read ~", out.name, rows[1])
				}
			}
			var doc struct {
				ProfilesIn string `json:"profiles_in"`
				Steps      []struct {
					Variants []struct {
						Profile *struct {
							Functions []struct {
								Name        string              `json:"name"`
								A           *analyze.ProfileRow `json:"a"`
								B           *analyze.ProfileRow `json:"b"`
								Change      float64             `json:"change_ms"`
								CILow       *float64            `json:"ci_low_ms"`
								Significant bool                `json:"significant"`
							} `json:"functions"`
						} `json:"profile"`
					} `json:"variants"`
				} `json:"steps"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			p := doc.Steps[0].Variants[0].Profile
			if (p != nil) != tt.section || doc.ProfilesIn != string(rc.ProfilesIn) {
				t.Fatalf("JSON: profile %v, profiles_in %q; want a profile %v, %q:\n%s", p != nil, doc.ProfilesIn, tt.section, rc.ProfilesIn, js.String())
			}
			if p == nil {
				return
			}
			if len(p.Functions) != 2 {
				t.Fatalf("JSON: %d function rows, want 2:\n%s", len(p.Functions), js.String())
			}
			if f := p.Functions[0]; f.Name != span || !f.Significant || f.CILow == nil || f.A == nil || f.A.Delta != 0.040 || f.B == nil || f.B.Delta != 0.080 || math.Abs(f.Change-0.040) > 1e-9 {
				t.Errorf("JSON: top function %+v, want the span, +0.040 ms, significant, with run A's row", f)
			}
			if f := p.Functions[1]; f.Name != "app.handle" || f.Significant {
				t.Errorf("JSON: second function %+v, want app.handle, not significant", f)
			}
		})
	}
}
