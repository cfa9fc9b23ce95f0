package report

import (
	"fmt"
	"io"

	"github.com/tollperf/toll/analyze"
)

// GatesText writes the outcome of each gate for a terminal: a ✓ line for
// a gate that passed everywhere, a ✗ line per failure, and a ? line per
// variant it could not judge.
func GatesText(w io.Writer, results []analyze.GateResult) error {
	ew := &errWriter{w: w}
	for _, r := range results {
		if !r.Failed() {
			fmt.Fprintf(ew, "  ✓ %s\n", r.Gate)
		}
		for _, f := range r.Failures {
			fmt.Fprintf(ew, "  ✗ %s\n", GateFailureText(r, f))
		}
		for _, u := range r.Unjudged {
			fmt.Fprintf(ew, "  ? %s: not judged (%s)\n", r.Gate, GateUnjudgedText(u))
		}
	}
	return ew.err
}

// GatesMarkdown writes the outcome of each gate as a Markdown list, for
// $GITHUB_STEP_SUMMARY. It writes nothing when there are no gates.
func GatesMarkdown(w io.Writer, results []analyze.GateResult) error {
	if len(results) == 0 {
		return nil
	}
	ew := &errWriter{w: w}
	failed := false
	for _, r := range results {
		failed = failed || r.Failed()
	}
	if failed {
		fmt.Fprintf(ew, "\n**Failed gates:**\n\n")
	} else {
		fmt.Fprintf(ew, "\n**Gates passed:**\n\n")
	}
	for _, r := range results {
		if !r.Failed() {
			fmt.Fprintf(ew, "- ✓ %s\n", codeSpan(r.Gate))
		}
		for _, f := range r.Failures {
			fmt.Fprintf(ew, "- ✗ %s\n", escape(GateFailureText(r, f)))
		}
		for _, u := range r.Unjudged {
			fmt.Fprintf(ew, "- ? %s not judged: %s\n", codeSpan(r.Gate), escape(GateUnjudgedText(u)))
		}
	}
	return ew.err
}
