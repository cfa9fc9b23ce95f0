package report

import (
	"bytes"
	"go/ast"
	"io"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
)

// renderAll renders every report of s, by name.
func renderAll(t *testing.T, s *analyze.Summary) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, f := range map[string]func(io.Writer, *analyze.Summary) error{
		"text": Text, "report.md": Markdown, "trials.csv": CSV, "metrics.txt": OpenMetrics, "report.html": HTML,
	} {
		var b bytes.Buffer
		if err := f(&b, s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.Bytes()
	}
	js, err := JSON(s)
	if err != nil {
		t.Fatal(err)
	}
	out["summary.json"] = js
	return out
}

// TestRendersFromSummaryJSONAlone: every report rendered from summary.json
// as read back is the report rendered from the analysis itself.
func TestRendersFromSummaryJSONAlone(t *testing.T) {
	s, _ := htmlFixture(t)
	direct := renderAll(t, s)
	back, err := ReadSummary(bytes.NewReader(direct["summary.json"]))
	if err != nil {
		t.Fatal(err)
	}
	again := renderAll(t, back)
	for name, want := range direct {
		if !bytes.Equal(again[name], want) {
			t.Errorf("%s differs when rendered from summary.json", name)
		}
	}
	if !bytes.Contains(direct["report.html"], []byte("CPU of measured services")) {
		t.Error("the per-second charts are missing from the page rendered from the summary")
	}
}

// TestReadSummaryRejects checks that a summary that is not JSON, lacks its
// manifest, or is of a schema version this toll does not read (none, 0,
// below 0 or newer) is refused, and that the error says which field and
// why: schema_version 0 was once read silently as this toll's.
func TestReadSummaryRejects(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{`, "decode summary"},
		{`{"schema_version": 1}`, "no manifest"},
		{`{"manifest": {}}`, "schema_version 0 (or none)"},
		{`{"schema_version": 0, "manifest": {}}`, "schema_version 0 (or none)"},
		{`{"schema_version": -1, "manifest": {}}`, "schema_version -1 (or none)"},
		{`{"schema_version": 99, "manifest": {}}`, "schema_version 99 is newer"},
	}
	for _, tt := range tests {
		_, err := ReadSummary(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.in, err, tt.want)
		}
	}
}

// TestReportReadsNoTrialsNorRenderedText: no file of the package reads
// trial records or decodes histograms (analyze does), and none looks into
// a cell's rendered text to decide how to show it.
func TestReportReadsNoTrialsNorRenderedText(t *testing.T) {
	fset, files := packageFiles(t)
	for _, f := range files {
		name := fset.File(f.Pos()).Name()
		for _, imp := range f.Imports {
			if strings.Contains(imp.Path.Value, "hdrhistogram") {
				t.Errorf("%s imports %s: histograms are analyze's", name, imp.Path.Value)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "record" && (x.Sel.Name == "Trial" || x.Sel.Name == "Sample" || x.Sel.Name == "Interval") {
					t.Errorf("%s: uses record.%s: a renderer works from the summary alone", fset.Position(x.Pos()), x.Sel.Name)
				}
				if x.Sel.Name == "ReadTrials" {
					t.Errorf("%s: reads trial records", fset.Position(x.Pos()))
				}
			case *ast.CallExpr:
				// strings.Contains(cell.Text, …) and the like: styling by
				// rendered text.
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if !ok || len(x.Args) == 0 {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "strings" {
					if a, ok := x.Args[0].(*ast.SelectorExpr); ok && a.Sel.Name == "Text" {
						t.Errorf("%s: parses a cell's rendered text", fset.Position(x.Pos()))
					}
				}
			}
			return true
		})
	}
}

func TestChangeCell(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	pctInfo := analyze.CostInfo{Label: "CPU per request", Unit: "ms", Digits: 3}
	for _, tt := range []struct {
		name    string
		d       analyze.Delta
		verdict Verdict
		size    analyze.Size
		bounds  string
	}{
		{"large rise", analyze.Delta{Pct: f(50), CILow: f(30.6), CIHigh: f(72.2), CIUnit: "%", Significant: true, Size: analyze.SizeLarge},
			VerdictUp, analyze.SizeLarge, "[+30.6%, +72.2%]"},
		{"small fall", analyze.Delta{Pct: f(-2), CILow: f(-3), CIHigh: f(-1), CIUnit: "%", Significant: true, Size: analyze.SizeSmall},
			VerdictDown, analyze.SizeSmall, "[-3.0%, -1.0%]"},
		{"unresolved", analyze.Delta{Pct: f(1), CILow: f(-1), CIHigh: f(3), CIUnit: "%", Size: analyze.SizeNone},
			VerdictSame, analyze.SizeNone, "[-1.0%, +3.0%]"},
		{"no interval", analyze.Delta{Pct: f(4), CIUnit: "%"}, VerdictNA, analyze.SizeNone, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.d.Settle()
			c := ChangeCell(pctInfo, &tt.d)
			if c.Kind != KindChange || c.Verdict != tt.verdict || c.Size != tt.size || c.Bounds != tt.bounds {
				t.Errorf("cell %+v, want verdict %s, size %s, bounds %q", c, tt.verdict, tt.size, tt.bounds)
			}
			if c.Value == nil || *c.Value != *tt.d.Pct {
				t.Errorf("value %v, want the estimate %v", c.Value, *tt.d.Pct)
			}
		})
	}
}

// TestStepsTableColoursChanges: in the table of all steps, every Δ% cell
// is a change cell and every baseline cell a value, whatever its column
// (the page coloured columns by position and got them wrong), but for a
// change from a baseline of 0, which has no ratio and is a difference.
func TestStepsTableColoursChanges(t *testing.T) {
	s := summary(t)
	two := *s
	st2 := s.Steps[0]
	st2.Index, st2.Rate = 1, st2.Rate*2
	two.Steps = append(append([]analyze.Step{}, s.Steps...), st2)
	tabs := Tables(&two)
	all := tabs[len(tabs)-1]
	for _, r := range all.Rows {
		for j, c := range r[1:] {
			h := all.Header[j+1]
			isBase := strings.HasSuffix(h, ": "+s.Baseline)
			if isBase && c.Kind != KindValue && c.Kind != KindNone {
				t.Errorf("%s / %s: kind %s, want a value", r[0].Text, h, c.Kind)
			}
			if !isBase && c.Kind != KindChange && c.Kind != KindNone && c.Kind != KindDelta {
				t.Errorf("%s / %s: kind %s, want a change", r[0].Text, h, c.Kind)
			}
		}
	}
}

func TestHeadlineText(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	h := analyze.Headline{Variant: "otel", Changes: []analyze.HeadlineCost{
		{Cost: analyze.CPUPerRequest, Label: "CPU per request", Unit: "ms", Digits: 3, Value: 1.5,
			Delta: &analyze.Delta{Abs: 0.5, Pct: f(50), CILow: f(30.6), CIHigh: f(72.2), Significant: true}},
		{Cost: analyze.LatencyP99, Label: "latency p99", Unit: "ms", Digits: 2, Value: 9.9,
			Delta: &analyze.Delta{Abs: 0.9, Pct: f(10), CILow: f(4), CIHigh: f(16), Significant: true}},
		{Cost: analyze.RSS, Label: "RSS", Unit: "MiB", Digits: 1, Value: 50,
			Delta: &analyze.Delta{Abs: 0.1, Pct: f(0.2), CILow: f(-1), CIHigh: f(1.4)}},
	}, Values: []analyze.HeadlineCost{{Cost: analyze.SpansPerReq, Label: "spans per request", Digits: 1, Value: 4}}}
	want := "+50% CPU per request [+31%, +72%], +0.90 ms latency p99 (+10% [+4.0%, +16%]), no resolved change in RSS [-1.0%, +1.4%]; 4.0 spans per request"
	if got := HeadlineText(h); got != want {
		t.Errorf("headline\n got %s\nwant %s", got, want)
	}
	// Two rounds of a tail: the headline says its interval tells nothing
	// rather than quote it; a bound that is not 0 never reads as 0.
	h.Changes[1].Delta = &analyze.Delta{N: 2, Abs: 5.8, Pct: f(74.9), CILow: f(-100), CIHigh: f(1058331)}
	h.Changes[1].TooWide = true
	h.Changes[0].Delta.CILow = f(0.03)
	want = "+50% CPU per request [+0.03%, +72%], latency p99: interval too wide to tell (2 rounds), no resolved change in RSS [-1.0%, +1.4%]; 4.0 spans per request"
	if got := HeadlineText(h); got != want {
		t.Errorf("headline\n got %s\nwant %s", got, want)
	}
	// RSS of services started once compared over their two starts: the
	// pairs it names are starts.
	h.Changes[2].Delta = &analyze.Delta{N: 2, Starts: 2, Abs: 112, Pct: f(47.8), CILow: f(-51.1), CIHigh: f(346.6)}
	h.Changes[2].TooWide = true
	want = "+50% CPU per request [+0.03%, +72%], latency p99: interval too wide to tell (2 rounds), RSS: interval too wide to tell (2 starts); 4.0 spans per request"
	if got := HeadlineText(h); got != want {
		t.Errorf("headline\n got %s\nwant %s", got, want)
	}
}

// TestRatioText checks that an experiment's ratio is written with its
// interval's bounds, which are not symmetric about it, and that a bound
// that is not 1 never reads as 1.
func TestRatioText(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, tt := range []struct {
		r    analyze.Ratio
		want string
	}{
		{analyze.Ratio{Label: "wall time", Times: 1.5, PlusMinus: f(0.6), Low: f(1.05), High: f(2.25)}, "1.50 × baseline wall time [1.05, 2.25]"},
		{analyze.Ratio{Label: "wall time", Times: 1.04, PlusMinus: f(0.04), Low: f(1.0004), High: f(1.08)}, "1.04 × baseline wall time [1.0004, 1.08]"},
		{analyze.Ratio{Label: "wall time", Times: 1.04}, "1.04 × baseline wall time"},
	} {
		if got := ratioText(tt.r); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// TestRunDescribed checks the first line of every report: the rounds of a
// load test or the repetitions of an experiment counted in words, and a
// baseline named baseline named once on the page.
func TestRunDescribed(t *testing.T) {
	for _, tt := range []struct {
		workload string
		rounds   int
		want     string
	}{
		{"", 10, "10 rounds"},
		{"", 1, "1 round"},
		{"startup", 6, "a startup experiment, 6 repetitions"},
	} {
		s := summary(t)
		s.Manifest.Workload, s.Manifest.Rounds = tt.workload, tt.rounds
		s.Baseline = "baseline"
		var text, md, html bytes.Buffer
		for _, err := range []error{Text(&text, s), Markdown(&md, s), HTML(&html, s)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		for name, out := range map[string]string{"text": text.String(), "markdown": strings.ToLower(md.String()), "html": html.String()} {
			if !strings.Contains(out, tt.want) || strings.Contains(out, "round(s)") || strings.Contains(out, "repetition(s)") {
				t.Errorf("%s report does not say %q, or counts in \"(s)\":\n%s", name, tt.want, out)
			}
		}
		if strings.Contains(html.String(), "baseline <b>baseline</b>") {
			t.Errorf("the page says \"against baseline baseline\"")
		}
	}
}

// TestOverheadAgainstLoad: a run of several load steps gets charts of the
// change against load, with one point per step and the interval as a band.
func TestOverheadAgainstLoad(t *testing.T) {
	s, _ := htmlFixture(t)
	st2 := s.Steps[0]
	st2.Index, st2.Rate = 1, 300
	s.Steps = append(s.Steps, st2)
	var b bytes.Buffer
	if err := HTML(&b, s); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, "Overhead against load") || !strings.Contains(page, `aria-label="Δ% CPU per request against load"`) {
		t.Fatal("no overhead-against-load chart for a run of two steps")
	}
	chart := page[strings.Index(page, `aria-label="Δ% CPU per request against load"`):]
	chart = chart[:strings.Index(chart, "</svg>")]
	if n := strings.Count(chart, "<circle"); n != 2*2 { // two variants, two steps
		t.Errorf("%d step markers, want 4", n)
	}
	if !strings.Contains(chart, "<polygon") {
		t.Error("no interval band")
	}
	one, _ := htmlFixture(t)
	b.Reset()
	if err := HTML(&b, one); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Overhead against load") {
		t.Error("an overhead-against-load chart for a single step")
	}
}
