package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// TestWriteAllNamesWhatItWrote checks that WriteAll returns the files it
// wrote, all of them when it can, and only those before a failure.
func TestWriteAllNamesWhatItWrote(t *testing.T) {
	all := []string{"summary.json", "report.md", "trials.csv", "series.csv", "metrics.txt", "report.html"}
	tests := []struct {
		name    string
		blocked string // a directory in the way of this file
		want    []string
	}{
		{"all", "", all},
		{"report.md blocked", "report.md", all[:1]},
		{"report.html blocked", "report.html", all[:5]},
		{"summary.json blocked", "summary.json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := record.CreateExact(filepath.Join(t.TempDir(), "run"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.blocked != "" {
				// A non-empty directory: renaming a file over it fails.
				if err := os.MkdirAll(filepath.Join(d.Path, tt.blocked, "x"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := WriteAll(d, summary(t))
			if (err != nil) != (tt.blocked != "") {
				t.Errorf("error %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("wrote %v, want %v", got, tt.want)
			}
			for _, f := range got {
				if st, err := os.Stat(filepath.Join(d.Path, f)); err != nil || !st.Mode().IsRegular() {
					t.Errorf("%s named but not written: %v", f, err)
				}
			}
		})
	}
}

// TestHTMLFooterSaysWhatThePageCameFrom checks that report.html says it
// was generated from summary.json alone only when toll report
// --from-summary rendered it (WriteRendered), and otherwise that it was
// generated from an analysis of the trials (WriteAll, as toll run and toll
// report write it): the run's own report said "from summary.json alone".
func TestHTMLFooterSaysWhatThePageCameFrom(t *testing.T) {
	const alone = "from summary.json alone"
	const analysed = "from its analysis of the run's trials"
	tests := []struct {
		name        string
		write       func(*record.Dir, *analyze.Summary) ([]string, error)
		want, never string
	}{
		{"WriteAll", WriteAll, analysed, alone},
		{"WriteRendered", WriteRendered, alone, analysed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := record.CreateExact(filepath.Join(t.TempDir(), "run"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tt.write(d, summary(t)); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(d.Path, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			if !strings.Contains(page, tt.want) {
				t.Errorf("report.html lacks %q", tt.want)
			}
			if strings.Contains(page, tt.never) {
				t.Errorf("report.html says %q", tt.never)
			}
		})
	}
}
