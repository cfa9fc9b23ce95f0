package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// JSON returns summary.json's content.
func JSON(s *analyze.Summary) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteAll writes summary.json, report.md, report.html (with charts of
// the trials' series), trials.csv (long format) and metrics.txt
// (OpenMetrics) into d.
func WriteAll(d *record.Dir, s *analyze.Summary, trials []*record.Trial) error {
	js, err := JSON(s)
	if err != nil {
		return err
	}
	if err := d.WriteFile("summary.json", js); err != nil {
		return err
	}
	for _, out := range []struct {
		name   string
		render func(io.Writer, *analyze.Summary) error
	}{{"report.md", Markdown}, {"trials.csv", CSV}, {"metrics.txt", OpenMetrics},
		{"report.html", func(w io.Writer, s *analyze.Summary) error { return HTML(w, s, trials) }}} {
		var b bytes.Buffer
		if err := out.render(&b, s); err != nil {
			return fmt.Errorf("render %s: %w", out.name, err)
		}
		if err := d.WriteFile(out.name, b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
