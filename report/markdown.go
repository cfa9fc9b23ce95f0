package report

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/tollperf/toll/analyze"
)

// Markdown writes report.md: the same content as Text, as Markdown tables,
// followed by the run laid out as the published benchmark the scenario's
// report.layout names (LayoutMarkdown), if any.
func Markdown(w io.Writer, s *analyze.Summary) error {
	ew := &errWriter{w: w}
	m := s.Manifest
	fmt.Fprintf(ew, "# %s: %s vs %s\n\n", escape(s.Scenario), escape(strings.Join(nonBaseline(s), ", ")), escape(s.Baseline))
	fmt.Fprintf(ew, "%s, %s, restart %s%s, seed %d, started %s.\n", upperFirst(roundsText(s)), modeOf(m), escape(restartOf(m)), variantWarmup(m), m.Seed, m.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	for _, line := range []string{scheduleLine(m), warmupsLine(s), settlingLine(s), warmupStartsLine(s)} {
		if line != "" {
			fmt.Fprintf(ew, "\n%s.\n", escape(line))
		}
	}
	for _, line := range precisionLines(s) {
		fmt.Fprintf(ew, "\n%s.\n", escape(line))
	}
	for _, h := range Headlines(s) {
		fmt.Fprintf(ew, "\n**%s**\n", escape(h))
	}
	if s.Partial != nil {
		fmt.Fprintf(ew, "\n**%s**\n", escape(PartialText(s.Partial)))
	}
	if !s.Valid() {
		fmt.Fprintf(ew, "\n**✗ invalid run: %s**\n", escape(strings.Join(InvalidTexts(s), "; ")))
	}
	if lines := headlineLines(s); len(lines) > 0 {
		fmt.Fprintln(ew)
		for _, line := range lines {
			fmt.Fprintf(ew, "- %s\n", escape(line))
		}
	}
	for _, t := range Tables(s) {
		fmt.Fprintf(ew, "\n## %s\n\n", t.Title)
		writeMarkdownTable(ew, t)
	}
	fmt.Fprintf(ew, "\nΔ%% is the change against %s: the geometric mean of the per-round ratios, with its 95%% confidence interval as [low, high]; ~ means the interval contains 0 (no difference this run can resolve).\n", s.Baseline)
	if anyChance(s) {
		fmt.Fprintf(ew, "\n%s means the interval excludes 0 at its own 95%%, but not once corrected for the number of costs tested (Holm): it may be chance.\n", ChanceMark)
	}
	if s.Manifest.Precision != nil {
		fmt.Fprintf(ew, "\n= means the whole interval lies within the cost's precision target: no change beyond it.\n")
	}
	if c := controlOf(s); c != "" {
		fmt.Fprintf(ew, "\nEvery variant's change is corrected by the A/A control (%s, a copy of %s run beside the variants): each round's ratio is divided by the control's, so a bias of the method cancels; the control's own row shows that bias.\n", c, s.Baseline)
	}
	for _, line := range append(runMultiplicity(s), latencyLine(s)) {
		if line != "" {
			fmt.Fprintf(ew, "\n%s\n", escape(line))
		}
	}
	if len(s.FlagGroups) > 0 {
		fmt.Fprintf(ew, "\n%s\n\n", escape(flagsHeading(s)))
		for _, g := range s.FlagGroups {
			mark := "" // a list item needs no mark of a condition
			if g.Invalidates {
				mark = markInvalid + " "
			}
			fmt.Fprintf(ew, "- %s%s\n", mark, escape(FlagGroupText(s, g)))
		}
	}
	var b strings.Builder
	writeNotes(&b, s, "")
	fmt.Fprintln(ew)
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		fmt.Fprintln(ew, escape(line))
	}
	if m.ReportLayout != "" && len(s.Steps) > 0 {
		// The scenario names a published benchmark: its tables in their
		// own shape follow toll's.
		fmt.Fprintln(ew)
		if err := LayoutMarkdown(ew, s, m.ReportLayout); err != nil {
			return err
		}
	}
	return ew.err
}

// upperFirst starts a sentence with a capital letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func escapeAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = escape(x)
	}
	return out
}

// escape makes s safe to write into report.md, in a table cell or a line of
// text (names come from the scenario and may hold anything), and leaves
// it as readable as it was: only what could change its meaning is
// escaped. A backslash or backtick is escaped (a backslash before an
// escaped pipe would otherwise unescape it), a pipe cannot end the cell,
// an asterisk cannot start emphasis, and an underscore cannot either
// unless it stands inside a word ("http_req_duration"), where CommonMark
// gives it no meaning. A bracket is escaped only where it could close a
// link or its reference (before "(" or "[") or a link's definition
// (before ":" in a line that begins with "["), so an interval reads
// "[+5.6%, +36.2%]" and "[+5.6%, +36.2%]: the in-band cost". HTML is
// shown as text, and a line break cannot end the line or the table's row.
func escape(s string) string {
	line := oneLine(s)
	rs := []rune(line)
	// CommonMark's link definitions begin their line, after at most three
	// spaces.
	trimmed := strings.TrimLeft(line, " ")
	definition := strings.HasPrefix(trimmed, "[") && len(line)-len(trimmed) <= 3
	var b strings.Builder
	b.Grow(len(rs) + 8)
	for i, r := range rs {
		switch r {
		case '\\', '|', '`', '*':
			b.WriteRune('\\')
			b.WriteRune(r)
		case '_':
			if !(i > 0 && i+1 < len(rs) && isWordRune(rs[i-1]) && isWordRune(rs[i+1])) {
				b.WriteRune('\\')
			}
			b.WriteRune(r)
		case ']':
			if i+1 < len(rs) && (rs[i+1] == '(' || rs[i+1] == '[' || rs[i+1] == ':' && definition) {
				b.WriteRune('\\')
			}
			b.WriteRune(r)
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isWordRune reports whether r is a letter or a digit, around which an
// underscore is part of a word.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// oneLine puts a text of several lines (an error followed by the end of a
// service's log) on one line, its line breaks shown as ↵, and its other
// control characters (terminal escapes) as \xNN.
func oneLine(s string) string {
	s = printable(strings.TrimRight(s, "\n"))
	return strings.NewReplacer("\r\n\t", " ↵ ", "\n\t", " ↵ ", "\r\n", " ↵ ", "\n", " ↵ ", "\r", " ↵ ").Replace(s)
}

// codeSpan writes s as a Markdown code span, shown as it is: backslash
// escapes and entities mean nothing in a code span, so s is not escaped;
// the fence is one backtick longer than the longest run of backticks in s
// (padded with spaces when s starts or ends with one), and a line break is
// shown as ↵.
func codeSpan(s string) string {
	s = oneLine(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
