package report

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// daySummary returns htmlFixture's run with per-second series of the
// given number of seconds (withSeconds) for its first variants variants
// (at most its 3), each with its six series (CPU, RSS, heap, p50, p99,
// rate; the variant without a JVM has no heap).
func daySummary(t *testing.T, variants, seconds int) *analyze.Summary {
	t.Helper()
	s, _ := htmlFixture(t)
	for i := range s.Steps {
		if len(s.Steps[i].Series) > variants {
			s.Steps[i].Series = s.Steps[i].Series[:variants]
		}
	}
	withSeconds(s, seconds)
	return s
}

// TestWriteDaySummary writes a synthetic day's results directory, for
// measuring `toll report --from-summary` by hand (docs/reliability.md):
//
//	TOLL_DAY_SUMMARY=/tmp/day TOLL_DAY_VARIANTS=3 go test ./report -run TestWriteDaySummary
//	/usr/bin/time -v toll report --from-summary /tmp/day
//
// It writes TOLL_DAY_SUMMARY/summary.json (and the manifest): 86,400
// seconds (or TOLL_DAY_SECONDS) of six per-second series for each of
// TOLL_DAY_VARIANTS variants (default 3), some 75 MB of JSON per variant
// and day. Skipped unless TOLL_DAY_SUMMARY is set.
func TestWriteDaySummary(t *testing.T) {
	path := os.Getenv("TOLL_DAY_SUMMARY")
	if path == "" {
		t.Skip("TOLL_DAY_SUMMARY names no directory to write")
	}
	variants := 3
	if v := os.Getenv("TOLL_DAY_VARIANTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 3 {
			t.Fatalf("TOLL_DAY_VARIANTS=%q: want 1, 2 or 3", v)
		}
		variants = n
	}
	seconds := 86400
	if v := os.Getenv("TOLL_DAY_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("TOLL_DAY_SECONDS=%q: want a number of seconds", v)
		}
		seconds = n
	}
	s := daySummary(t, variants, seconds)
	d, err := record.CreateExact(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteManifest(s.Manifest); err != nil {
		t.Fatal(err)
	}
	js, err := JSON(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("summary.json", js); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s/summary.json: %d variants' series of %d s, %d bytes", path, variants, seconds, len(js))
}

// readSizes is an io.Reader that records the largest read asked of it.
type readSizes struct {
	r   io.Reader
	max int
}

func (r *readSizes) Read(p []byte) (int, error) {
	r.max = max(r.max, len(p))
	return r.r.Read(p)
}

// TestReadSummaryStreams checks that reading summary.json does not hold
// the file's text: a tenth of a day's series (a summary.json of some 20
// MB, written as summary.json is, a number and its indentation a line) is
// read through a buffer of at most 64 KiB, whereas reading it whole (or
// through encoding/json's Decoder) asks ever larger reads of a buffer
// that grows to the file's size; and it is decoded into what
// encoding/json decodes it into.
func TestReadSummaryStreams(t *testing.T) {
	s := daySummary(t, 3, 8640)
	js, err := JSON(s)
	if err != nil {
		t.Fatal(err)
	}
	var want analyze.Summary
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	r := &readSizes{r: bytes.NewReader(js)}
	got, err := ReadSummary(r)
	if err != nil {
		t.Fatal(err)
	}
	if r.max > 64<<10 {
		t.Errorf("reading a summary.json of %d bytes asked a read of %d bytes: want a buffer of at most 64 KiB, not the file held whole", len(js), r.max)
	}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("ReadSummary decodes summary.json otherwise than encoding/json does")
	}
}
