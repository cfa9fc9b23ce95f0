package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

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
