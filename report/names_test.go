package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/net/html"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// Names a scenario may hold: pipes, line breaks, backticks, backslashes
// and HTML, which must not break report.md's tables nor report.html.
const (
	hostileBase    = "base|line"
	hostileVariant = "ot|el\n`x`<b>bold</b>\\"
	hostileService = "svc|a\r\nb"
	hostileRequest = "get|`/x`\\|<i>y</i>\nz"
)

// hostileSummary analyses 3 rounds of a baseline and a variant with hostile
// names, two measured services (so they get rows of their own) and a mix of
// two requests (so each gets rows of its own), and one flagged trial whose
// message has several lines.
func hostileSummary(t *testing.T) *analyze.Summary {
	t.Helper()
	return hostileSummaryOf(t, hostileBase, hostileVariant, hostileService, hostileRequest,
		"service "+hostileService+" exited during the trial: exit status 1; last 2 log lines:\n\tpanic: | boom\n\t<stack>")
}

// hostileSummaryOf is hostileSummary with the names and the flagged
// trial's error given.
func hostileSummaryOf(t *testing.T, hostileBase, hostileVariant, hostileService, hostileRequest, errText string) *analyze.Summary {
	t.Helper()
	m := &record.Manifest{Scenario: "s|c\n<n>", Baseline: hostileBase, Variants: []string{hostileBase, hostileVariant}, Rounds: 3,
		Restart: "once", Mode: "sequential", Started: time.Unix(0, 0)}
	var trials []*record.Trial
	for r := 1; r <= 3; r++ {
		for i, v := range m.Variants {
			start := time.Unix(100, 0)
			tr := &record.Trial{Index: 2*r - 1 + i, Round: r, Variant: v, TargetRate: 10, PlannedS: 2,
				MeasureStart: start, MeasureEnd: start.Add(2 * time.Second),
				Services: []record.ServiceRun{{Name: hostileService, Measured: true}, {Name: "other", Measured: true, Role: "agent"}}}
			per := 0.001 * (1 + 0.1*float64(i)) * (1 + 0.01*float64(r))
			for _, svc := range []string{hostileService, "other"} {
				tr.Samples = append(tr.Samples, record.ServiceSeries{Service: svc, Points: []record.Sample{{T: 0, CPU: 1, RSS: 1 << 20}, {T: 2, CPU: 1 + 20*per, RSS: 1 << 20}}})
			}
			for s := 0; s < 2; s++ {
				tr.Intervals = append(tr.Intervals, record.Interval{T: float64(s), Scheduled: 10, Sent: 10, Completed: 10, OK: 10})
			}
			tr.Load.Requests = []record.RequestTotals{{Name: hostileRequest, Sent: 10, Completed: 10, OK: 10}, {Name: "plain", Sent: 10, Completed: 10, OK: 10}}
			if r == 3 && i == 1 {
				tr.Interrupted = true
				tr.Error = errText
			}
			trials = append(trials, tr)
		}
	}
	s, err := analyze.Summarize(m, trials, analyze.Options{IncludeInterrupted: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cells splits a Markdown table row into its cells as GitHub's renderer
// does: at every pipe that no backslash escapes.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			cur.WriteByte(row[i])
			cur.WriteByte(row[i+1])
			i++
		case row[i] == '|':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, cur.String())
}

func TestMarkdownHostileNames(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, hostileSummary(t)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	lines := strings.Split(md, "\n")
	tables, rows := 0, 0
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		tables++
		want := len(cells(lines[i]))
		for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			rows++
			if got := len(cells(lines[i])); got != want {
				t.Errorf("row of %d cells in a table of %d: %q", got, want, lines[i])
			}
		}
		if i < len(lines) && lines[i] != "" {
			t.Errorf("table ends in a line that is not blank: %q", lines[i])
		}
	}
	if tables == 0 || rows < 10 {
		t.Fatalf("%d tables, %d rows:\n%s", tables, rows, md)
	}
	for _, want := range []string{`ot\|el ↵ \` + "`x\\`&lt;b&gt;bold&lt;/b&gt;\\\\", `svc\|a ↵ b (app): CPU`, `errors (get\|\` + "`/x\\`" + `\\\|&lt;i&gt;y&lt;/i&gt; ↵ z)`,
		`panic: \| boom ↵ &lt;stack&gt;`} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, bad := range []string{"<b>", "<i>", "<stack>", "<n>"} {
		if strings.Contains(md, bad) {
			t.Errorf("report.md holds raw HTML %q", bad)
		}
	}
	// The flag's message, log lines and all, is one list item.
	for _, l := range lines {
		if strings.Contains(l, "boom") && !strings.HasPrefix(l, "- ✗ interrupted in 1 of 6 trials (6): ") {
			t.Errorf("flag message spills out of its list item: %q", l)
		}
	}
}

// TestHostileMarkupAndEscapes renders report.md with a CommonMark (GFM)
// renderer and checks that Markdown's emphasis, links and images in names
// are shown as text, that terminal escapes in a service's log (a flag's
// message) reach neither report.md nor the terminal as they are, and
// that what toll writes itself (an interval, a name with an underscore
// inside a word) is left as it reads.
func TestHostileMarkupAndEscapes(t *testing.T) {
	const (
		variant = "*bold*_it_[l](javascript:alert(1))![i](x.png)"
		escapes = "\x1b[2J\x1b]0;PWNED\x07\u009b1m"
	)
	s := hostileSummaryOf(t, "base", variant, "svc_a*", "get_[x](javascript:y)",
		"service svc exited: exit status 1; last 1 log lines:\n\t"+escapes+"boom")
	var md, text bytes.Buffer
	if err := Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := Text(&text, s); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert(md.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&page)
	if err != nil {
		t.Fatal(err)
	}
	var shown strings.Builder
	walk(doc, func(n *html.Node) {
		switch n.Data {
		case "em", "a", "img", "b", "i", "script":
			t.Errorf("a name became an element <%s>", n.Data)
		case "strong": // toll's own bold lines, never a name's
			if n.FirstChild != nil && n.FirstChild.Data == "bold" {
				t.Errorf("a name became an element <strong>bold</strong>")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				shown.WriteString(c.Data)
			}
		}
	})
	for _, want := range []string{variant, "svc_a*", "get_[x](javascript:y)",
		`\x1b[2J\x1b]0;PWNED\x07\xc2\x9b1mboom`, "[-1.5%, +1.5%]"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("rendered report.md lacks %q:\n%s", want, shown.String())
		}
	}
	// Left as it reads in report.md itself.
	for _, want := range []string{"[-1.5%, +1.5%]", "svc_a\\*"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	for name, out := range map[string]string{"report.md": md.String(), "the terminal table": text.String()} {
		if strings.ContainsAny(out, "\x1b\x07\u009b") {
			t.Errorf("%s holds a terminal escape: %q", name, out)
		}
	}
	if !strings.Contains(text.String(), `\x1b[2J\x1b]0;PWNED\x07\xc2\x9b1mboom`) {
		t.Errorf("the terminal does not show the escapes as text:\n%s", text.String())
	}
}

func TestTextHostileNames(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, hostileSummary(t)); err != nil {
		t.Fatal(err)
	}
	// Every line of a table is as wide as its rule.
	var width int
	inTable := false
	for _, l := range strings.Split(b.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "  ─"):
			width, inTable = len([]rune(l)), true
		case l == "":
			inTable = false
		case inTable && len([]rune(l)) > width:
			t.Errorf("table line wider (%d) than its rule (%d): %q", len([]rune(l)), width, l)
		}
	}
	if !strings.Contains(b.String(), "\n        \tpanic: | boom") {
		t.Errorf("the flag's log lines are not indented under it:\n%s", b.String())
	}
}

func TestHTMLHostileNames(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, hostileSummary(t)); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	walk(doc, func(n *html.Node) {
		if n.Data == "i" || n.Data == "stack" || n.Data == "n" {
			t.Errorf("a name became an element <%s>", n.Data)
		}
		if n.Data == "b" && n.FirstChild != nil && n.FirstChild.Data == "bold" {
			t.Errorf("a name became an element <b>bold</b>")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				text.WriteString(c.Data)
			}
		}
	})
	for _, want := range []string{hostileVariant, "errors (" + hostileRequest + ")", "<stack>"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the page's text lacks %q", want)
		}
	}
}

// TestOutcomeShown checks that a partial run and an invalid one say so in
// the terminal, report.md and report.html.
func TestOutcomeShown(t *testing.T) {
	s := summary(t)
	s.Partial = &analyze.Partial{Interrupted: true, Planned: 20, Complete: 7, Text: "partial run (interrupted): 7 of 20 trials complete; missing: round 4 otel, rounds 5-10"}
	s.Invalid = []string{"otel at 10 req/s: all 3 trials failed or were flagged (no request succeeded in 3)"}
	renders := map[string]func(*bytes.Buffer) error{
		"text":     func(b *bytes.Buffer) error { return Text(b, s) },
		"markdown": func(b *bytes.Buffer) error { return Markdown(b, s) },
		"html":     func(b *bytes.Buffer) error { return HTML(b, s) },
	}
	for name, render := range renders {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"partial run (interrupted): 7 of 20 trials complete; missing: round 4 otel, rounds 5-10",
			"invalid run: otel at 10 req/s: all 3 trials failed or were flagged (no request succeeded in 3)"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s lacks %q:\n%s", name, want, b.String())
			}
		}
	}
	// A complete, valid run says neither.
	s.Partial, s.Invalid = nil, nil
	var b bytes.Buffer
	Text(&b, s)
	if strings.Contains(b.String(), "partial run") || strings.Contains(b.String(), "invalid run") {
		t.Errorf("a complete, valid run reads:\n%s", b.String())
	}
}

func TestCodeSpan(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/tmp/run-1", "`/tmp/run-1`"},
		{"/tmp/a&b|<c>", "`/tmp/a&b|<c>`"},
		{"/tmp/`x`", "`` /tmp/`x` ``"},
		{"a``b", "```a``b```"},
		{"a\nb", "`a ↵ b`"},
	}
	for _, tt := range tests {
		if got := codeSpan(tt.in); got != tt.want {
			t.Errorf("codeSpan(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
