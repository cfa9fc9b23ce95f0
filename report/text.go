package report

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// restartOf is the restart policy as a report's first line says it: with
// the number of starts of a run that started its services once several
// times over.
func restartOf(m *record.Manifest) string {
	if m.Starts > 1 {
		return fmt.Sprintf("%s (%d starts)", m.Restart, m.Starts)
	}
	return m.Restart
}

// variantWarmup says how long each variant's fresh services were warmed
// before their first loaded trial, after the restart policy in a report's
// first line ("" for no such warm-up).
func variantWarmup(m *record.Manifest) string {
	if m.Load.VariantWarmupS <= 0 {
		return ""
	}
	d := time.Duration(m.Load.VariantWarmupS * float64(time.Second)).String()
	at := ""
	switch {
	case m.Load.VariantWarmupUsers > 0:
		at = fmt.Sprintf(" by %d user", m.Load.VariantWarmupUsers)
		if m.Load.VariantWarmupUsers > 1 {
			at += "s"
		}
	case m.Load.VariantWarmupRate > 0:
		at = fmt.Sprintf(" at %g req/s", m.Load.VariantWarmupRate)
	}
	if m.Layout.WarmupCPUs != "" {
		at += " on CPUs " + m.Layout.WarmupCPUs
	}
	if u := m.Load.VariantWarmupUntil; u != nil && u.Auto {
		// The warm-ups line that follows says what toll chose for each.
		on := ""
		if m.Layout.WarmupCPUs != "" {
			on = " on CPUs " + m.Layout.WarmupCPUs
		}
		return ", variant warm-ups chosen by toll" + on
	}
	if m.Load.VariantWarmupUntil != nil {
		// In phases (run.warmupPhases): the users, the rate, then each
		// trial's own load.
		switch {
		case m.Load.VariantWarmupUsers > 0 && m.Load.VariantWarmupRate > 0:
			at += fmt.Sprintf(", then at %g req/s", m.Load.VariantWarmupRate)
		case m.Load.VariantWarmupUsers == 0 && m.Load.VariantWarmupRate == 0:
			return ", variant warm-up" + at + " until the JIT settles, at most " + d
		}
		return ", variant warm-up" + at + ", then at each trial's load, each until the JIT settles, at most " + d + " each"
	}
	return ", variant warm-up " + d + at
}

// warmupsLine says how each variant's warm-ups until the JIT settled
// (load.variant_warmup_until) went, in one line ("" without them):
// "variant warm-ups until the JIT settles (below 5 ms/s over 10 s, at most
// 2m0s): baseline 25–31 s, 2 of 2 settled; go 120 s, no JVM".
//
// A run in precision mode whose scenario starts its services afresh every
// round or trial, and names no warm-up, gets a line that says why toll
// warmed nothing.
func warmupsLine(s *analyze.Summary) string {
	if m := s.Manifest; m != nil && m.Precision != nil && m.Load.VariantWarmupS == 0 && (m.Restart == "per-round" || m.Restart == "per-trial") {
		if m.Chosen != nil && m.Chosen.Restart {
			return fmt.Sprintf("no variant warm-up: toll starts the services afresh every round, and each trial's warm-up load (%g s) warms them", m.Load.WarmupS)
		}
		return fmt.Sprintf("no variant warm-up: the scenario starts its services afresh every %s (restart: %s), to measure them so", strings.TrimPrefix(m.Restart, "per-"), m.Restart)
	}
	if s.Manifest == nil || s.Manifest.Load.VariantWarmupUntil == nil || len(s.Warmups) == 0 {
		return ""
	}
	u := s.Manifest.Load.VariantWarmupUntil
	if u == nil {
		return ""
	}
	var parts []string
	for _, w := range s.Warmups {
		lasted := fmt.Sprintf("%.0f s", w.ShortestS)
		if fmt.Sprintf("%.0f", w.LongestS) != fmt.Sprintf("%.0f", w.ShortestS) {
			lasted = fmt.Sprintf("%.0f–%.0f s", w.ShortestS, w.LongestS)
		}
		if w.NoJVM {
			parts = append(parts, fmt.Sprintf("%s %s, no JVM", w.Variant, lasted))
		} else {
			part := fmt.Sprintf("%s %s, %d of %d settled", w.Variant, lasted, w.Settled, w.Count)
			if w.Steady > 0 {
				part += fmt.Sprintf(" (%d on a steady CPU per request before the JIT settled)", w.Steady)
			}
			parts = append(parts, part)
		}
	}
	if u.Auto {
		jvm := "until its JIT settles (below %g ms/s over %g s, at most %s)"
		switch {
		case u.JVMUsers > 0 && u.JVMRateTimes > 0:
			jvm = fmt.Sprintf("by %d users, then at %g times each trial's rate (at most %d requests in flight), then at each trial's load, each until its JIT settles (below %%g ms/s over %%g s, at most %%s in all)", u.JVMUsers, u.JVMRateTimes, u.JVMUsers)
		case u.JVMUsers > 0:
			jvm = fmt.Sprintf("by %d users, then at each trial's load, each until its JIT settles (below %%g ms/s over %%g s, at most %%s in all)", u.JVMUsers)
		}
		on := ""
		if c := s.Manifest.Layout.WarmupCPUs; c != "" {
			// Nothing is measured during a warm-up: its compilers may use
			// every CPU (pinning.warmup: all).
			on = " on CPUs " + c + " at idle priority"
		}
		return fmt.Sprintf("variant warm-ups chosen by toll, once per start"+on+": a JVM "+jvm+", other runtimes %g s: %s", u.JITBelowMs, u.OverS,
			time.Duration(s.Manifest.Load.VariantWarmupS*float64(time.Second)), u.NoJVMS, strings.Join(parts, "; "))
	}
	return fmt.Sprintf("variant warm-ups until the JIT settles (below %g ms/s over %g s, at most %s): %s", u.JITBelowMs, u.OverS,
		time.Duration(s.Manifest.Load.VariantWarmupS*float64(time.Second)), strings.Join(parts, "; "))
}

// Text writes the terminal summary of s: the tables, the flags, the
// warnings and where the run happened.
func Text(w io.Writer, s *analyze.Summary) error {
	ew := &errWriter{w: printableWriter{w}}
	m := s.Manifest
	fmt.Fprintf(ew, "\n%s — %s vs %s, %s, %s, restart %s%s, seed %d\n", s.Scenario, s.Baseline,
		strings.Join(nonBaseline(s), ", "), roundsText(s), modeOf(m), restartOf(m), variantWarmup(m), m.Seed)
	for _, line := range []string{scheduleLine(m), warmupsLine(s), settlingLine(s), warmupStartsLine(s)} {
		if line != "" {
			fmt.Fprintf(ew, "  %s\n", line)
		}
	}
	for _, line := range precisionLines(s) {
		fmt.Fprintf(ew, "  %s\n", line)
	}
	for _, line := range headlineLines(s) {
		fmt.Fprintf(ew, "  %s\n", line)
	}
	for _, t := range Tables(s) {
		fmt.Fprintf(ew, "\n  %s\n", t.Title)
		writeAligned(ew, t)
	}
	if hs := Headlines(s); len(hs) > 0 {
		fmt.Fprintln(ew)
		for _, h := range hs {
			fmt.Fprintf(ew, "  %s\n", h)
		}
	}
	if len(s.CostCurves) > 0 {
		fmt.Fprintln(ew)
		if err := CostCurvesText(ew, s.CostCurves); err != nil {
			return err
		}
		fmt.Fprintln(ew, "  toll cost DIR --rate R --instances N gives the added cores, memory and latency at your load.")
	}
	fmt.Fprintf(ew, "\n  Δ%% is the change against %s: geometric mean of per-round ratios [95%% interval]; ~ means the interval contains 0.\n", s.Baseline)
	if anyChance(s) {
		fmt.Fprintf(ew, "  %s means the interval excludes 0 at its own 95%%, but not once corrected for the number of costs tested: it may be chance.\n", ChanceMark)
	}
	if s.Manifest.Precision != nil {
		fmt.Fprintf(ew, "  = means the whole CI lies within the precision target: no change beyond it.\n")
	}
	if c := controlOf(s); c != "" {
		fmt.Fprintf(ew, "  Corrected by the A/A control (%s, a copy of %s): each round's ratio divided by the control's; its own row shows the bias.\n", c, s.Baseline)
	}
	for _, line := range append(runMultiplicity(s), latencyLine(s)) {
		if line != "" {
			fmt.Fprintf(ew, "  %s\n", line)
		}
	}
	writeFlags(ew, s, "  ")
	writeNotes(ew, s, "  ")
	if line := outcome(s); line != "" {
		fmt.Fprintf(ew, "\n%s\n", line)
	}
	return ew.err
}

// Brief writes the terminal summary of s in brief (toll run -q): the
// headlines and the tables, and a line that says the run is partial or
// invalid when it is.
func Brief(w io.Writer, s *analyze.Summary) error {
	ew := &errWriter{w: w}
	for _, line := range headlineLines(s) {
		fmt.Fprintf(ew, "%s\n", line)
	}
	for _, h := range Headlines(s) {
		fmt.Fprintf(ew, "%s\n", h)
	}
	for _, t := range Tables(s) {
		fmt.Fprintf(ew, "\n%s\n", t.Title)
		writeAligned(ew, t)
	}
	if line := outcome(s); line != "" {
		fmt.Fprintf(ew, "\n%s\n", line)
	}
	return ew.err
}

// outcome says, in a line each, that the run is partial and what is
// missing, and that its measurement is invalid and why; "" for a complete,
// valid run.
func outcome(s *analyze.Summary) string {
	var lines []string
	if s.Partial != nil {
		lines = append(lines, "! "+PartialText(s.Partial))
	}
	if !s.Valid() {
		lines = append(lines, "✗ invalid run: "+strings.Join(InvalidTexts(s), "; "))
	}
	return strings.Join(lines, "\n")
}

func writeAligned(w io.Writer, t Table) {
	rows := [][]string{t.Header}
	for _, r := range t.Rows {
		rows = append(rows, Texts(r))
	}
	widths := make([]int, len(t.Header))
	for ri, r := range rows {
		rows[ri] = make([]string, len(r))
		for i, c := range r {
			c = flat(c)
			rows[ri][i] = c
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for ri, r := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range r {
			pad := widths[i] - utf8.RuneCountInString(c)
			if i == 0 {
				b.WriteString(c + strings.Repeat(" ", pad))
			} else {
				b.WriteString("  " + strings.Repeat(" ", pad) + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if ri == 0 {
			total := 0
			for _, wd := range widths {
				total += wd + 2
			}
			fmt.Fprintln(w, "  "+strings.Repeat("─", total-2))
		}
	}
}

// writeNotes writes the warnings and where and how the run happened.
func writeNotes(w io.Writer, s *analyze.Summary, indent string) {
	if len(s.Warnings) > 0 {
		fmt.Fprintln(w)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "%s! %s\n", indent, WarningText(warn))
	}
	m := s.Manifest
	if a := s.Arrivals; a != nil {
		fmt.Fprintf(w, "\n%s%s\n", indent, ArrivalsNote(a))
	}
	if m.Load.Model == "closed" {
		fmt.Fprintf(w, "\n%sClosed model: each user waits for a response before its next request, so a slow or stalled\n"+
			"%sservice is simply sent less; latency percentiles understate stalls. Use rate (open model) to see them.\n", indent, indent)
	}
	fmt.Fprintf(w, "\n%sHost %s: %s, %d cores, %s %s; toll %s (%s)\n", indent, m.Host.Name, m.Host.CPUModel, m.Host.Cores, m.Host.OS, m.Host.Kernel, m.TollVersion, m.GoVersion)
	lay := layout(m.Layout.LoadCPUs, m.Layout.ServiceCPUs)
	if d := m.Layout.DuetCPUs; analyze.SharedDuet(m) && m.Mode == "together" {
		lay = fmt.Sprintf("together: load generator on CPU %s, %s and every variant at once sharing CPU %s", m.Layout.LoadCPUs, s.Baseline, d[0])
	} else if analyze.SharedDuet(m) {
		lay = fmt.Sprintf("duet: load generator on CPU %s, %s and each variant sharing CPU %s", m.Layout.LoadCPUs, s.Baseline, d[0])
	} else if len(d) == 2 {
		lay = fmt.Sprintf("duet: load generator on CPU %s, %s on CPU %s beside each variant on CPU %s", m.Layout.LoadCPUs, s.Baseline, d[0], d[1])
	}
	if m.Layout.Network == "isolated" {
		lay += "; network isolated (loopback only)"
	}
	fmt.Fprintf(w, "%sCosts read from %s; %s\n", indent, costSource(m.Layout.Cgroup, m.Layout.CgroupNote), lay)
	for _, n := range m.Notes {
		fmt.Fprintf(w, "%s%s\n", indent, n)
	}
}

func costSource(cg, note string) string {
	switch cg {
	case "v1", "v2":
		return "each service's own cgroup (" + cg + ")"
	}
	if note != "" {
		return "/proc (no cgroup: " + note + ")"
	}
	return "/proc"
}

func layout(load, svc string) string {
	if load == "" && svc == "" {
		return "no CPU pinning"
	}
	return fmt.Sprintf("load generator on CPU %s, services on CPU %s", load, svc)
}

func nonBaseline(s *analyze.Summary) []string {
	var out []string
	for _, v := range s.Variants {
		if v != s.Baseline {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return []string{"(no variant)"}
	}
	return out
}

// flat puts a table cell on one line: a name with a line break or a tab
// would break the columns.
func flat(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// modeOf names how a run's variants met the load: "sequential",
// "duet", "shared duet", "shared duet in turns of 250ms" (load.slice), or
// "together".
func modeOf(m *record.Manifest) string {
	switch {
	case m.Mode == "":
		return "sequential"
	case m.Mode != "duet":
		return m.Mode
	case !analyze.SharedDuet(m):
		return "duet"
	case m.Load.SliceS > 0:
		return fmt.Sprintf("shared duet in turns of %s", time.Duration(m.Load.SliceS*float64(time.Second)))
	}
	return "shared duet"
}

// headlineLines writes each headline as a line: "otel: +50% CPU per
// request [+31%, +72%], …", with the step when there are several.
func headlineLines(s *analyze.Summary) []string {
	labels := map[int]string{}
	for _, st := range s.Steps {
		labels[st.Index] = st.Label()
	}
	var out []string
	for _, h := range s.Headlines {
		name := h.Variant
		if len(s.Steps) > 1 {
			name += " at " + labels[h.Step]
		}
		out = append(out, name+": "+HeadlineText(h))
	}
	return out
}
