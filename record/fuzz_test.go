package record

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzReadManifest feeds manifest.json arbitrary bytes, as a damaged
// results directory would: never a panic, and a manifest it accepts is of
// a schema this toll reads.
func FuzzReadManifest(f *testing.F) {
	d := &Dir{Path: f.TempDir()}
	if err := d.WriteManifest(&Manifest{Scenario: "demo", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Rounds: 2, Started: time.Unix(1, 0)}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(d.Path, manifestFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"schema_version": 999}`))
	f.Add([]byte(`{"variants": "baseline"}`))
	f.Add([]byte(`{"rounds": 1e400}`))
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &Dir{Path: t.TempDir()}
		if err := os.WriteFile(filepath.Join(d.Path, manifestFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := d.ReadManifest()
		if err == nil && m.SchemaVersion > SchemaVersion {
			t.Fatalf("accepted schema version %d", m.SchemaVersion)
		}
	})
}

// FuzzReadTrials feeds a trial file arbitrary bytes: never a panic.
func FuzzReadTrials(f *testing.F) {
	d := &Dir{Path: f.TempDir()}
	if err := os.MkdirAll(filepath.Join(d.Path, trialsDir), 0o755); err != nil {
		f.Fatal(err)
	}
	tr := &Trial{Index: 1, Round: 1, Variant: "otel", MeasureStart: time.Unix(1, 0), MeasureEnd: time.Unix(3, 0),
		Intervals: []Interval{{T: 0, Scheduled: 5, Sent: 5, Completed: 5, OK: 5, Histogram: "HISTFAAAACl4nJNpmSzMwMDAwQABTBDKT4GBgZnNzW4Cg/0HiMgBBkYGAF5UBEs="}}}
	if err := d.WriteTrial(tr); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(d.Path, TrialFile(tr)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"index": "one"}`))
	f.Add([]byte(``))
	f.Add(good[:len(good)/3])
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &Dir{Path: t.TempDir()}
		if err := os.MkdirAll(filepath.Join(d.Path, trialsDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.Path, trialsDir, "0001-otel.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		ts, bad, err := d.ReadTrials()
		if err != nil {
			t.Fatalf("one trial file failed the whole directory: %v", err)
		}
		if len(ts)+len(bad) != 1 {
			t.Fatalf("%d trials and %d unreadable from one file", len(ts), len(bad))
		}
	})
}
