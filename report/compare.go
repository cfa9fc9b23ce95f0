package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tollperf/toll/analyze"
)

// CompareTables builds one table per load step of a run comparison: per
// variant, its overhead against the baseline in run A and in run B, and
// the change of B's overhead against A's.
func CompareTables(rc *analyze.RunComparison) []Table {
	var ts []Table
	for _, st := range rc.Steps {
		for _, v := range st.Variants {
			t := Table{Title: fmt.Sprintf("%s vs %s at %s", v.Name, rc.Baseline, st.Label()),
				Header: []string{"cost", "A: Δ% vs " + rc.Baseline, "B: Δ% vs " + rc.Baseline, "B vs A"}}
			for _, c := range v.Costs {
				info := analyze.Info(c.Cost)
				label := info.Label
				if info.Unit != "" {
					label += " (" + info.Unit + ")"
				}
				t.Rows = append(t.Rows, []Cell{TextCell(label), ChangeCell(info, c.A), ChangeCell(info, c.B), TextCell(ChangeVerdict(&c))})
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// CompareText writes the comparison of runs a and b for a terminal: the
// overheads' tables, then, for each variant both runs profiled, where its
// added CPU per request moved.
func CompareText(w io.Writer, rc *analyze.RunComparison, a, b string) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "\nA: %s\nB: %s\n", a, b)
	for _, line := range DifferenceLines(rc) {
		fmt.Fprintf(ew, "\n  ! %s\n", line)
	}
	for _, t := range CompareTables(rc) {
		fmt.Fprintf(ew, "\n  %s\n", t.Title)
		writeAligned(ew, t)
	}
	fmt.Fprintf(ew, "\n  %s\n", compareNote)
	for _, line := range compareMultiplicity(rc) {
		fmt.Fprintf(ew, "  %s\n", line)
	}
	for _, t := range compareProfileTables(rc) {
		fmt.Fprintf(ew, "\n  %s\n", t.Title)
		writeAligned(ew, t)
	}
	if notes := compareProfileNotes(rc); len(notes) > 0 {
		fmt.Fprintln(ew)
		for _, line := range notes {
			fmt.Fprintf(ew, "  %s\n", line)
		}
	}
	return ew.err
}

// CompareMarkdown writes the comparison as Markdown (for
// $GITHUB_STEP_SUMMARY), with the outcome of its gates.
func CompareMarkdown(w io.Writer, rc *analyze.RunComparison, a, b string, gates []analyze.GateResult) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "## toll compare\n\nA: %s  \nB: %s\n", codeSpan(a), codeSpan(b))
	for _, line := range DifferenceLines(rc) {
		fmt.Fprintf(ew, "\n> **%s**\n", escape(line))
	}
	tables := func(ts []Table) {
		for _, t := range ts {
			fmt.Fprintf(ew, "\n### %s\n\n| %s |\n|%s\n", escape(t.Title), strings.Join(escapeAll(t.Header), " | "), strings.Repeat(" ---: |", len(t.Header)))
			for _, r := range t.Rows {
				fmt.Fprintf(ew, "| %s |\n", strings.Join(escapeAll(Texts(r)), " | "))
			}
		}
	}
	tables(CompareTables(rc))
	fmt.Fprintf(ew, "\n%s\n", compareNote)
	for _, line := range compareMultiplicity(rc) {
		fmt.Fprintf(ew, "\n%s\n", escape(line))
	}
	tables(compareProfileTables(rc))
	for _, line := range compareProfileNotes(rc) {
		fmt.Fprintf(ew, "\n%s\n", escape(line))
	}
	if ew.err != nil {
		return ew.err
	}
	return GatesMarkdown(w, gates)
}

// CompareDoc is the document `toll compare --json` writes: the two runs,
// the comparison and the outcome of each gate.
type CompareDoc struct {
	// SchemaVersion is the version of this document's layout.
	SchemaVersion int `json:"schema_version"`
	// A and B are the results directories compared, as given.
	A string `json:"a"`
	B string `json:"b"`
	*analyze.RunComparison
	// Gates is the outcome of each --fail-on, in the order given.
	Gates []GateDoc `json:"gates"`
	// Failed is true when some gate failed (toll compare exits 4).
	Failed bool `json:"failed"`
}

// GateDoc is the outcome of one gate in a CompareDoc: its findings in
// words.
type GateDoc struct {
	// Gate is the gate as written.
	Gate string `json:"gate"`
	// Failures has a line per variant and step beyond the threshold
	// (GateFailureText).
	Failures []string `json:"failures,omitempty"`
	// Unjudged has a line per variant and step the gate could not judge
	// (GateUnjudgedText).
	Unjudged []string `json:"unjudged,omitempty"`
}

// CompareJSON writes the comparison of runs a and b, with the outcome of
// its gates, as JSON (see docs/results-schema.md). It fills in the
// Verdict of every change rc holds, which analyze leaves empty.
func CompareJSON(w io.Writer, rc *analyze.RunComparison, a, b string, gates []analyze.GateResult) error {
	for c := range rc.Changes() {
		c.Verdict = ChangeVerdict(c)
		for _, d := range []*analyze.Delta{c.A, c.B} {
			if d != nil {
				d.Verdict = DeltaVerdict(d)
			}
		}
	}
	doc := CompareDoc{SchemaVersion: 1, A: a, B: b, RunComparison: rc, Gates: []GateDoc{}}
	for _, g := range gates {
		gd := GateDoc{Gate: g.Gate}
		for _, f := range g.Failures {
			gd.Failures = append(gd.Failures, GateFailureText(g, f))
		}
		for _, f := range g.Unjudged {
			gd.Unjudged = append(gd.Unjudged, GateUnjudgedText(f))
		}
		doc.Gates = append(doc.Gates, gd)
		doc.Failed = doc.Failed || g.Failed()
	}
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode comparison: %w", err)
	}
	_, err = w.Write(append(js, '\n'))
	return err
}

const compareNote = "Each run's Δ% is that run's own paired overhead against its baseline. B vs A is the change of B's overhead against A's (Welch 95% interval over the two runs' rounds); ~ means the interval contains 0. Overheads, not raw values, are compared, because the machine's speed drifts between runs."

// DifferenceLines says, when the two runs compared did not run alike and
// the user compared them anyway, that their change holds that difference:
// a line for the machines and one for the services.
func DifferenceLines(rc *analyze.RunComparison) []string {
	var machine, service []string
	for _, d := range rc.Differences {
		if d.Machine() {
			machine = append(machine, DifferenceText(d))
		} else {
			service = append(service, DifferenceText(d))
		}
	}
	var lines []string
	if len(machine) > 0 {
		lines = append(lines, "NOT THE SAME MACHINE, compared anyway (--allow-different-machines): "+strings.Join(machine, "; ")+". Every change below holds the machines' difference as well as the agent's.")
	}
	if len(service) > 0 {
		lines = append(lines, "NOT THE SAME SERVICES, compared anyway (--allow-different-services): "+strings.Join(service, "; ")+". Every change below holds the services' difference as well as the agent's.")
	}
	return lines
}

// DifferenceText says in English what differs between two runs: `CPU
// model: "AMD EPYC" in A, "Intel Xeon" in B`, or `service "provider":
// command ["app", "--work", "1"] in A, absent in B`.
func DifferenceText(d analyze.RunDifference) string {
	if d.What == analyze.DiffService {
		side := func(s string) string {
			if s == "" {
				return "absent"
			}
			return s
		}
		return fmt.Sprintf("service %q: %s in A, %s in B", d.Service, side(d.A), side(d.B))
	}
	what := map[string]string{analyze.DiffCPUModel: "CPU model", analyze.DiffCores: "cores", analyze.DiffKernel: "kernel", analyze.DiffCgroup: "cgroup version"}[d.What]
	return fmt.Sprintf("%s: %q in A, %q in B", what, d.A, d.B)
}
