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

// WriteAll writes summary.json, report.md, trials.csv (long format),
// series.csv (per second), metrics.txt (OpenMetrics) and report.html into d, in that order, all
// from s alone. It returns the names of the files it
// wrote, also when it stops at an error, so that no file is named that was
// not written.
func WriteAll(d *record.Dir, s *analyze.Summary) ([]string, error) {
	var written []string
	for _, pf := range s.ProfileFiles {
		if err := d.WriteProfile(pf.Name, pf.Profile); err != nil {
			return written, err
		}
		written = append(written, pf.Name)
	}
	js, err := JSON(s)
	if err != nil {
		return written, err
	}
	if err := d.WriteFile("summary.json", js); err != nil {
		return written, err
	}
	written = append(written, "summary.json")
	for _, out := range []struct {
		name   string
		render func(io.Writer, *analyze.Summary) error
	}{{"report.md", Markdown}, {"trials.csv", CSV}, {"series.csv", SeriesCSV}, {"metrics.txt", OpenMetrics}, {"report.html", HTML}} {
		var b bytes.Buffer
		if err := out.render(&b, s); err != nil {
			return written, fmt.Errorf("render %s: %w", out.name, err)
		}
		if err := d.WriteFile(out.name, b.Bytes()); err != nil {
			return written, err
		}
		written = append(written, out.name)
	}
	return written, nil
}

// ReadSummary decodes summary.json's content, the input every renderer
// needs: `toll report --from-summary` renders from it alone.
func ReadSummary(r io.Reader) (*analyze.Summary, error) {
	var s analyze.Summary
	dec := json.NewDecoder(r)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("decode summary: %w", err)
	}
	if s.SchemaVersion != analyze.SummarySchemaVersion {
		return nil, fmt.Errorf("summary schema_version %d, this toll reads %d", s.SchemaVersion, analyze.SummarySchemaVersion)
	}
	if s.Manifest == nil {
		return nil, fmt.Errorf("summary has no manifest")
	}
	return &s, nil
}
