package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// JSON returns summary.json's content. Each change and flag carries its
// words, for a reader of the JSON: it fills in the Verdict of every
// change of s (DeltaVerdict) and the Message of every flag (FlagText),
// which analyze leaves empty.
func JSON(s *analyze.Summary) ([]byte, error) {
	for d := range s.Deltas() {
		d.Verdict = DeltaVerdict(d)
	}
	for f := range s.AllFlags() {
		f.Message = FlagText(*f)
	}
	// Each warning carries its words beside its code, a partial or
	// invalid run its lines and the arrivals their note, for a reader of
	// the JSON; the summary's own are left as analyze made them.
	withText := *s
	if s.Partial != nil {
		p := *s.Partial
		p.Text = PartialText(&p)
		withText.Partial = &p
	}
	withText.Invalid = InvalidTexts(s)
	if s.Arrivals != nil {
		a := *s.Arrivals
		a.Note = ArrivalsNote(&a)
		withText.Arrivals = &a
	}
	if len(s.Warnings) > 0 {
		withText.Warnings = make([]analyze.Warning, len(s.Warnings))
		for i, w := range s.Warnings {
			w.Text = WarningText(w)
			withText.Warnings[i] = w
		}
	}
	b, err := json.MarshalIndent(&withText, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteAll writes each variant's profile (profiles/*.pb.gz), summary.json, report.md, trials.csv (long format),
// series.csv (per second), metrics.txt (OpenMetrics) and report.html into d, in that order, all
// from s alone. It returns the names of the files it
// wrote, also when it stops at an error, so that no file is named that was
// not written.
func WriteAll(d *record.Dir, s *analyze.Summary) ([]string, error) {
	var profiles []string
	for _, pf := range s.ProfileFiles {
		if err := d.WriteProfile(pf.Name, pf.Profile); err != nil {
			return profiles, err
		}
		profiles = append(profiles, pf.Name)
	}
	js, err := JSON(s)
	if err != nil {
		return profiles, err
	}
	if err := d.WriteFile("summary.json", js); err != nil {
		return profiles, err
	}
	js = nil // a day's per-second series make it hundreds of MB
	written, err := writeRendered(d, s, HTML)
	return append(append(profiles, "summary.json"), written...), err
}

// WriteRendered writes the files WriteAll writes but summary.json, from s:
// what `toll report --from-summary` writes, summary.json being its input,
// report.html saying it was rendered from summary.json alone.
// It returns the names of the files it wrote, also when it stops at an
// error.
func WriteRendered(d *record.Dir, s *analyze.Summary) ([]string, error) {
	return writeRendered(d, s, HTMLFromSummary)
}

// writeRendered writes the files WriteAll writes but summary.json, from s,
// report.html by html: its footer says what s was read from.
func writeRendered(d *record.Dir, s *analyze.Summary, html func(io.Writer, *analyze.Summary) error) ([]string, error) {
	var written []string
	for _, out := range []struct {
		name   string
		render func(io.Writer, *analyze.Summary) error
	}{{"report.md", Markdown}, {"trials.csv", CSV}, {"series.csv", SeriesCSV}, {"metrics.txt", OpenMetrics}, {"report.html", html}} {
		// Straight to the file: a day's series.csv is hundreds of MB.
		err := d.WriteFileWith(out.name, func(w io.Writer) error {
			if err := out.render(w, s); err != nil {
				return fmt.Errorf("render %s: %w", out.name, err)
			}
			return nil
		})
		if err != nil {
			return written, err
		}
		written = append(written, out.name)
	}
	return written, nil
}

// ReadSummary decodes summary.json's content, the input every renderer
// needs: `toll report --from-summary` renders from it alone. It decodes
// from a stream, a token at a time, through a buffer of a few KiB: a
// day's per-second series make summary.json hundreds of MB, several times
// what the decoded series take (a number on a line of its own with its
// indentation is some 30 bytes; decoded, 8). encoding/json's Decoder
// could not: it buffers a whole top-level value, here the whole file.
// The fields are matched and the values converted by encoding/json's
// rules, which wrote the file; only an error is reported the streaming
// way, at the first fault and naming where it lies, where encoding/json
// would have checked the whole text before decoding any of it.
func ReadSummary(r io.Reader) (*analyze.Summary, error) {
	var s analyze.Summary
	if err := jsonv2.UnmarshalRead(r, &s, jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false)); err != nil {
		return nil, fmt.Errorf("decode summary: %w", err)
	}
	if err := checkSummarySchema(s.SchemaVersion); err != nil {
		return nil, err
	}
	if s.Manifest == nil {
		return nil, fmt.Errorf("summary has no manifest")
	}
	return &s, nil
}

// checkSummarySchema refuses a summary of a schema version this toll does
// not read: a newer one, or one below 1, which no toll writes (a summary
// with no schema_version, or 0, was not written by toll as it is). The
// caller names the file.
func checkSummarySchema(version int) error {
	switch {
	case version > analyze.SummarySchemaVersion:
		return fmt.Errorf("schema_version %d is newer than this toll reads (%d): upgrade toll", version, analyze.SummarySchemaVersion)
	case version < 1:
		return fmt.Errorf("schema_version %d (or none): toll writes %d, so the summary was not written by toll as it is, or was edited", version, analyze.SummarySchemaVersion)
	case version != analyze.SummarySchemaVersion:
		return fmt.Errorf("schema_version %d is older than this toll reads (%d): analyse the run again with toll report", version, analyze.SummarySchemaVersion)
	}
	return nil
}

// DecodeSummary decodes summary.json's content held in memory, as
// ReadSummary.
func DecodeSummary(b []byte) (*analyze.Summary, error) {
	return ReadSummary(bytes.NewReader(b))
}
