package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/report"
)

// githubActions is what toll writes for GitHub Actions: workflow-command
// annotations (::error:: and ::warning::) when GITHUB_ACTIONS is "true",
// and Markdown appended to the file $GITHUB_STEP_SUMMARY names.
type githubActions struct {
	// annotate is set when running in GitHub Actions.
	annotate bool
	// stepSummary is the step summary file's path, or "".
	stepSummary string
	// out receives the annotations (the runner reads them from stdout).
	out io.Writer
}

// githubFromEnv reads GitHub Actions' environment; annotations go to out.
func githubFromEnv(out io.Writer) githubActions {
	return githubActions{annotate: os.Getenv("GITHUB_ACTIONS") == "true", stepSummary: os.Getenv("GITHUB_STEP_SUMMARY"), out: out}
}

// annotation writes one workflow command ("error" or "warning") with a
// title, when running in GitHub Actions.
func (g githubActions) annotation(kind, title, msg string) {
	if !g.annotate {
		return
	}
	fmt.Fprintf(g.out, "::%s title=%s::%s\n", kind, escapeProperty(title), escapeData(msg))
}

// gates annotates every failed gate as an error and every variant a gate
// could not judge as a warning.
func (g githubActions) gates(results []analyze.GateResult) {
	for _, r := range results {
		for _, f := range r.Failures {
			g.annotation("error", "toll: gate failed: "+r.Gate, report.GateFailureText(r, f))
		}
		for _, u := range r.Unjudged {
			g.annotation("warning", "toll: gate not judged: "+r.Gate, report.GateUnjudgedText(u))
		}
	}
}

// summary appends what write produces to the step summary, when there is one.
func (g githubActions) summary(write func(io.Writer) error) error {
	if g.stepSummary == "" {
		return nil
	}
	if err := appendFile(g.stepSummary, write); err != nil {
		return fmt.Errorf("write $GITHUB_STEP_SUMMARY: %w", err)
	}
	return nil
}

// escapeData escapes a workflow command's message as the runner expects.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// parseGates parses --fail-on flags; a bad one is a usage error.
func parseGates(texts []string) ([]analyze.Gate, error) {
	var gs []analyze.Gate
	for _, t := range texts {
		g, err := analyze.ParseGate(t)
		if err != nil {
			return nil, &exitError{ExitUsage, fmt.Errorf("--fail-on: %w", err)}
		}
		gs = append(gs, g)
	}
	return gs, nil
}

// partialGates returns the exit error of gates that cannot be judged
// because the run sum (named by what) is partial, after saying so and
// annotating it for GitHub Actions; nil when there are no gates or the run
// is whole.
func partialGates(w io.Writer, gh githubActions, what string, sum *analyze.Summary, gates []analyze.Gate) error {
	if len(gates) == 0 || sum.Partial == nil {
		return nil
	}
	msg := fmt.Sprintf("gates not judged: %s is a %s", what, report.PartialText(sum.Partial))
	fmt.Fprintln(w, "  "+msg)
	gh.annotation("error", "toll: gates not judged", msg)
	return &exitError{ExitUnjudged, errors.New(msg)}
}

// gatesFailed returns the exit error of failed gates, or nil.
func gatesFailed(results []analyze.GateResult) error {
	n := 0
	for _, r := range results {
		n += len(r.Failures)
	}
	if n == 0 {
		return nil
	}
	return &exitError{ExitGate, fmt.Errorf("gate failed: %d variant(s) and step(s) beyond a --fail-on threshold", n)}
}
