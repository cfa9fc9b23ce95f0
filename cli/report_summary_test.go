package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/report"
)

// TestReportFromSummary checks that toll report --from-summary renders
// every report from summary.json alone, a day of per-second series in
// it, leaves summary.json as it was, and names the file and the place of
// a fault in a damaged one.
func TestReportFromSummary(t *testing.T) {
	d, err := record.CreateExact(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := &record.Manifest{Scenario: "day", Baseline: "baseline", Variants: []string{"baseline"}, Rounds: 1}
	if err := d.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	cpu := analyze.Series{Metric: "cpu", Label: "CPU", Unit: "cores"}
	for i := range 86400 {
		cpu.T = append(cpu.T, float64(i))
		cpu.Median, cpu.Low, cpu.High = append(cpu.Median, 1), append(cpu.Low, 0.9), append(cpu.High, 1.1)
		cpu.Trials = append(cpu.Trials, 1)
	}
	sum := &analyze.Summary{SchemaVersion: analyze.SummarySchemaVersion, Scenario: "day", Baseline: "baseline",
		Variants: []string{"baseline"}, Manifest: m,
		Steps: []analyze.Step{{Rate: 100, Variants: []analyze.VariantResult{{Name: "baseline", Rounds: 1}},
			Series: []analyze.SeriesSet{{Variant: "baseline", Metrics: []analyze.Series{cpu}}}}}}
	js, err := report.JSON(sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("summary.json", js); err != nil {
		t.Fatal(err)
	}
	run := func() error {
		root := newRootCmd(nil)
		root.SetOut(new(bytes.Buffer))
		root.SetArgs([]string{"report", "--from-summary", d.Path})
		return root.Execute()
	}
	if err := run(); err != nil {
		t.Fatalf("toll report --from-summary: %v", err)
	}
	for _, f := range []string{"report.md", "trials.csv", "series.csv", "metrics.txt", "report.html"} {
		if _, err := os.Stat(filepath.Join(d.Path, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if after, err := os.ReadFile(filepath.Join(d.Path, "summary.json")); err != nil || !bytes.Equal(after, js) {
		t.Errorf("summary.json changed (%v)", err)
	}

	bad := bytes.Replace(js, []byte(`"median": [`), []byte(`"median": ["x", `), 1)
	if err := d.WriteFile("summary.json", bad); err != nil {
		t.Fatal(err)
	}
	err = run()
	if code := exitCodeOf(err); code != ExitFailure {
		t.Fatalf("damaged summary.json: exit %d (%v), want %d", code, err, ExitFailure)
	}
	for _, w := range []string{filepath.Join(d.Path, "summary.json"), "/steps/0/series/0/metrics/0/median/0"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}

	// A summary of schema_version 0 was rendered as if this toll's.
	unversioned := bytes.Replace(js, []byte(`"schema_version": 1,`), []byte(`"schema_version": 0,`), 1)
	if bytes.Equal(unversioned, js) {
		t.Fatal("summary.json has no schema_version 1 to replace")
	}
	if err := d.WriteFile("summary.json", unversioned); err != nil {
		t.Fatal(err)
	}
	err = run()
	if code := exitCodeOf(err); code != ExitFailure {
		t.Fatalf("summary.json of schema_version 0: exit %d (%v), want %d", code, err, ExitFailure)
	}
	for _, w := range []string{filepath.Join(d.Path, "summary.json"), "schema_version 0"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
}
