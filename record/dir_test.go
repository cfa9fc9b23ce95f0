package record

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestCreateNamesAndDedupes(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 11, 22, 10, 4, 5, 0, time.FixedZone("x", 3600))
	a, err := Create(root, "quick start/1", at)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(root, "quick start/1", at)
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Base(a.Path); got != "quick_start_1-20261122T090405Z" {
		t.Errorf("name %q", got)
	}
	if a.Path == b.Path || !strings.HasPrefix(b.Path, a.Path) {
		t.Errorf("second run %q should get a suffix of %q", b.Path, a.Path)
	}
}

func TestCreateExactRefusesNonEmpty(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if _, err := CreateExact(dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("got %v", err)
	}
	if _, err := CreateExact(filepath.Join(dir, "new")); err != nil {
		t.Error(err)
	}
}

func TestRoundTrip(t *testing.T) {
	d, err := CreateExact(filepath.Join(t.TempDir(), "r"))
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Scenario: "s", Baseline: "baseline", Variants: []string{"baseline", "otel"}, Seed: 7, Started: time.Unix(100, 0).UTC()}
	if err := d.WriteManifest(m); err != nil {
		t.Fatal(err)
	}
	start := time.Unix(200, 0).UTC()
	var want []*Trial
	for i, v := range []string{"otel", "baseline", "otel"} {
		tr := &Trial{Index: 3 - i, Variant: v, Round: 1, MeasureStart: start, MeasureEnd: start.Add(2 * time.Second),
			Intervals: []Interval{{T: 0, Completed: 5, Errors: ErrorCounts{HTTP5xx: 1}}},
			Samples:   []ServiceSeries{{Service: "c", Source: "proc", Points: []Sample{{T: 0, CPU: 1.5, RSS: 10}}}}}
		if err := d.WriteTrial(tr); err != nil {
			t.Fatal(err)
		}
		want = append([]*Trial{tr}, want...)
	}
	o, err := Open(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	gm, err := o.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	if gm.Seed != 7 || gm.SchemaVersion != SchemaVersion || !reflect.DeepEqual(gm.Variants, m.Variants) {
		t.Errorf("manifest %+v", gm)
	}
	got, bad, err := o.ReadTrials()
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("trials differ:\n got %+v\nwant %+v", got, want)
	}
	if got[0].Window() != 2*time.Second {
		t.Errorf("window %v", got[0].Window())
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Join(d.Path, trialsDir))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

func TestOpenRejects(t *testing.T) {
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a toll results directory") {
		t.Errorf("got %v", err)
	}
	d, _ := CreateExact(filepath.Join(t.TempDir(), "r"))
	os.WriteFile(filepath.Join(d.Path, manifestFile), []byte(`{"schema_version": 99}`), 0o644)
	if _, err := d.ReadManifest(); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("got %v", err)
	}
}

func TestErrorCounts(t *testing.T) {
	e := ErrorCounts{Connect: 1, HTTP4xx: 2}.Add(ErrorCounts{Timeout: 3, HTTP5xx: 4, Other: 5})
	if e.Total() != 15 {
		t.Errorf("total %d", e.Total())
	}
}

func TestErrorExamplesFirst(t *testing.T) {
	tests := []struct {
		name string
		x    *ErrorExamples
		want string
	}{
		{"nil", nil, ""},
		{"empty", &ErrorExamples{}, ""},
		{"one", &ErrorExamples{HTTP5xx: "HTTP 503 Service Unavailable"}, "HTTP 503 Service Unavailable"},
		{"connect before the rest", &ErrorExamples{Connect: "refused", Other: "EOF"}, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.x.First(); got != tt.want {
				t.Errorf("First() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWriteFileWithStreams checks that WriteFileWith passes what write
// writes on to the file instead of holding it: 16 MiB written a KiB at a
// time allocate a small fraction of that; that the file then holds all of
// it; and that a write that fails leaves neither the file nor a
// temporary one.
func TestWriteFileWithStreams(t *testing.T) {
	d, err := CreateExact(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	const size = 16 << 20
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 64)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = d.WriteFileWith("big.csv", func(w io.Writer) error {
		for range size / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/8 {
		t.Errorf("writing %d bytes allocated %d: want them passed on to the file, not held", size, alloc)
	}
	if st, err := os.Stat(filepath.Join(d.Path, "big.csv")); err != nil || st.Size() != size {
		t.Errorf("big.csv: %v, want %d bytes", err, size)
	}

	failed := errors.New("renderer failed")
	if err := d.WriteFileWith("bad.csv", func(w io.Writer) error {
		w.Write(chunk)
		return failed
	}); !errors.Is(err, failed) {
		t.Errorf("error %v, want the write's own", err)
	}
	entries, err := os.ReadDir(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), "bad.csv") {
			t.Errorf("%s left behind by a failed write", e.Name())
		}
	}
}

// TestLogsFollowTheDirectoryHeld moves a results directory away and puts a
// symbolic link to another directory at its path, then opens, writes,
// reads and lists logs: each reaches the directory Create made, under its
// new name, and nothing the link's target, where a service started after
// the swap used to log.
func TestLogsFollowTheDirectoryHeld(t *testing.T) {
	tests := []struct {
		name string
		use  func(d *Dir) error
	}{
		{"OpenLog", func(d *Dir) error {
			f, err := d.OpenLog("a.provider.2.log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			f.WriteString("started\n")
			return f.Close()
		}},
		{"LogOpener", func(d *Dir) error {
			f, err := d.LogOpener("a.provider.2.log")(os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			f.WriteString("started\n")
			return f.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			out, moved, decoy := filepath.Join(tmp, "out"), filepath.Join(tmp, "moved"), filepath.Join(tmp, "decoy")
			d, err := CreateExact(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(decoy, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(out, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(decoy, out); err != nil {
				t.Fatal(err)
			}
			if err := tt.use(d); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(moved, "logs", "a.provider.2.log")); err != nil || string(b) != "started\n" {
				t.Errorf("the log in the directory held reads %q (%v), want %q", b, err, "started\n")
			}
			if leaked, _ := os.ReadDir(decoy); len(leaked) > 0 {
				t.Errorf("written into the link's target: %v", leaked)
			}
			entries, err := d.ReadLogs()
			if err != nil || len(entries) != 1 || entries[0].Name() != "a.provider.2.log" {
				t.Errorf("ReadLogs: %v (%v), want the log written", entries, err)
			}
		})
	}
}

// TestReadsFollowTheDirectoryHeld moves a results directory away, puts a
// symbolic link to another directory holding a decoy summary.json at its
// path, and reads the run's files through Open and ReadFile: each reads
// the directory Create made, as toll report --from-summary and toll run
// --resume read it.
func TestReadsFollowTheDirectoryHeld(t *testing.T) {
	tmp := t.TempDir()
	out, moved, decoy := filepath.Join(tmp, "out"), filepath.Join(tmp, "moved"), filepath.Join(tmp, "decoy")
	d, err := CreateExact(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("summary.json", []byte("run\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(decoy, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(decoy, "summary.json"), []byte("decoy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(decoy, out); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		read func() ([]byte, error)
	}{
		{"ReadFile", func() ([]byte, error) { return d.ReadFile("summary.json") }},
		{"Open", func() ([]byte, error) {
			f, err := d.Open("summary.json")
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(f)
		}},
	}
	for _, tt := range tests {
		if b, err := tt.read(); err != nil || string(b) != "run\n" {
			t.Errorf("%s: %q (%v), want the run's own %q", tt.name, b, err, "run\n")
		}
	}
}
