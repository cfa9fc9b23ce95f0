package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tollperf/toll/record"
)

// TestRenderBrief checks that toll run -q's rendering prints the headlines
// and the tables, not the notes and the environment, and still writes
// every report file.
func TestRenderBrief(t *testing.T) {
	for _, brief := range []bool{false, true} {
		dir, err := record.Open(writeRun(t, 1.2, 1))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		_, written, err := renderDir(context.Background(), &out, dir, renderOptions{brief: brief})
		if err != nil {
			t.Fatal(err)
		}
		text := out.String()
		if !strings.Contains(text, "agent: ") || !strings.Contains(text, "CPU per request (ms)") {
			t.Errorf("brief %v: no headline or table:\n%s", brief, text)
		}
		if notes := strings.Contains(text, "Host ") || strings.Contains(text, "Δ% is the change"); notes == brief {
			t.Errorf("brief %v: notes and environment printed: %v\n%s", brief, notes, text)
		}
		if len(written) < 5 {
			t.Errorf("brief %v: wrote %v, want every report", brief, written)
		}
	}
}
