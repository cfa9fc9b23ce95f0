package report

import (
	"bytes"
	"encoding/json"
	"fmt"

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

// WriteAll writes summary.json and report.md into d.
func WriteAll(d *record.Dir, s *analyze.Summary) error {
	js, err := JSON(s)
	if err != nil {
		return err
	}
	if err := d.WriteFile("summary.json", js); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := Markdown(&md, s); err != nil {
		return err
	}
	return d.WriteFile("report.md", md.Bytes())
}
