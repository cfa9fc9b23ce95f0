package recovery

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestDamagedRecords runs a short run once (two rounds of a baseline
// and a heavier variant) and, in each subtest, damages a copy of its
// results directory as a failing disk, an editor or an attacker could.
func TestDamagedRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	path := tolltest.WriteScenario(t, "records", tolltest.HeavyVariants, `  rate: 20
  warmup: 1s
  duration: 2s
rounds: 2`)
	whole := filepath.Join(t.TempDir(), "out")
	if code, stdout, stderr := tolltest.Run(t, "run", path, "--out", whole, "-q"); code != 0 && code != cli.ExitInvalid {
		t.Fatalf("toll run: exit %d\n%s%s", code, stdout, stderr)
	}
	copyRun := func(t *testing.T) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "run")
		if out, err := exec.Command("cp", "-r", whole, dst).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v %s", whole, err, out)
		}
		return dst
	}
	t.Run("latency histogram", func(t *testing.T) { badLatencyHistogram(t, copyRun(t)) })
	t.Run("unreadable trial file", func(t *testing.T) { unreadableTrialFile(t, whole, copyRun(t), copyRun(t)) })
	t.Run("gates of a partial run", func(t *testing.T) { partialRunGates(t, whole, copyRun(t)) })
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// trialFiles returns the trial files of dir, in the order they ran.
func trialFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "trials", "*.json"))
	if len(files) < 4 {
		t.Fatalf("%s: %d trial files, want 4", dir, len(files))
	}
	return files
}

// editTrial rewrites a trial file's JSON with edit.
func editTrial(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(must(os.ReadFile(path)), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if err := os.WriteFile(path, must(json.Marshal(m)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// craftedHistogram is a valid HdrHistogram V2 compressed encoding, 44 bytes
// before base64, whose header claims a highest trackable value of 2^62:
// decoding it as it stands allocates a counts array of hundreds of MB.
func craftedHistogram() string {
	var head [40]byte
	binary.BigEndian.PutUint32(head[0:], 0x1c849303) // V2 encoding cookie
	binary.BigEndian.PutUint32(head[12:], 3)         // significant digits
	binary.BigEndian.PutUint64(head[16:], 1)         // lowest trackable
	binary.BigEndian.PutUint64(head[24:], 1<<62)     // highest trackable
	binary.BigEndian.PutUint64(head[32:], 0x3ff0000000000000)
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(head[:])
	w.Close()
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, uint32(0x1c849304)) // V2 compressed cookie
	binary.Write(&b, binary.BigEndian, uint32(z.Len()))
	b.Write(z.Bytes())
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// badLatencyHistogram damages the latency histograms of two
// trials, one with garbage and one with a crafted header claiming 2^62 µs:
// toll report keeps both trials, leaves their latency out with a
// latency-unreadable flag that says why, and refuses the crafted one
// before it allocates.
func badLatencyHistogram(t *testing.T, dir string) {
	files := trialFiles(t, dir)
	for i, h := range []string{"bm90IGEgaGlzdG9ncmFt", craftedHistogram()} {
		editTrial(t, files[i], func(m map[string]any) {
			for _, iv := range m["intervals"].([]any) {
				iv.(map[string]any)["histogram"] = h
			}
		})
	}
	cmd := tolltest.Command(t, "report", dir)
	_, stdout, stderr := tolltest.RunCommand(t, cmd)
	if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; rss > 150<<10 {
		t.Errorf("toll report reached %d MiB of RSS on a crafted histogram", rss>>10)
	}
	var sum struct {
		Trials []struct {
			Index int
			Flags []struct{ Code, Message string }
		}
	}
	if err := json.Unmarshal(must(os.ReadFile(filepath.Join(dir, "summary.json"))), &sum); err != nil {
		t.Fatalf("summary.json: %v\n%s%s", err, stdout, stderr)
	}
	flagged, why := 0, ""
	for _, tr := range sum.Trials {
		for _, f := range tr.Flags {
			if f.Code == "latency-unreadable" {
				flagged++
				why += f.Message + "\n"
				t.Logf("trial %d: %s", tr.Index, f.Message)
			}
		}
	}
	if len(sum.Trials) != 4 || flagged != 2 {
		t.Errorf("%d trials analysed, %d flagged latency-unreadable; want 4 and 2\n%s%s", len(sum.Trials), flagged, stdout, stderr)
	}
	// The report gives the cause once, with its trials; each trial's flag
	// in summary.json says why its histogram was refused.
	if !strings.Contains(stdout+stderr, "latency-unreadable in 2 of 4 trials") {
		t.Errorf("the report does not name the cause and its trials:\n%s%s", stdout, stderr)
	}
	if !strings.Contains(why, "beyond toll's bound") {
		t.Errorf("the flags do not say why the crafted histogram was refused:\n%s", why)
	}
}

// unreadableTrialFile damages three trial files of dir (truncated, empty,
// a newer schema), and one of other with a field of the wrong type: toll report and toll compare still report the run, name each file and why it was left
// out, and call the run partial, as they do for missing trials.
func unreadableTrialFile(t *testing.T, whole, dir, other string) {
	files := trialFiles(t, dir)
	b := must(os.ReadFile(files[0]))
	os.WriteFile(files[0], b[:len(b)/2], 0o644)
	os.WriteFile(files[1], nil, 0o644)
	editTrial(t, files[2], func(m map[string]any) { m["schema_version"] = 999 })

	code, stdout, stderr := tolltest.Run(t, "report", dir)
	out := stdout + stderr
	if code != 0 {
		t.Errorf("toll report: exit %d, want 0 (a partial report)\n%s", code, out)
	}
	for _, want := range []string{"partial run", filepath.Base(files[0]), filepath.Base(files[1]), "schema version 999"} {
		if !strings.Contains(out, want) {
			t.Errorf("toll report does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Errorf("no summary written: %v", err)
	}

	files = trialFiles(t, other)
	editTrial(t, files[3], func(m map[string]any) { m["intervals"] = "not a list" })
	code, stdout, stderr = tolltest.Run(t, "compare", whole, other)
	out = stdout + stderr
	if code != 0 {
		t.Errorf("toll compare: exit %d, want 0\n%s", code, out)
	}
	for _, want := range []string{"partial run", filepath.Base(files[3])} {
		if !strings.Contains(out, want) {
			t.Errorf("toll compare does not say %q:\n%s", want, out)
		}
	}
}

// partialRunGates gates on a run that lost trials: toll
// compare and toll report say the run is partial and exit ExitUnjudged
// rather than 0, while a whole run's gates are judged.
func partialRunGates(t *testing.T, whole, dir string) {
	files := trialFiles(t, dir)
	os.Remove(files[len(files)-1])
	gate := "cpu_per_request > +1000%"

	for _, args := range [][]string{
		{"compare", whole, dir, "--fail-on", gate},
		{"compare", dir, whole, "--fail-on", gate},
		{"report", dir, "--fail-on", gate},
	} {
		code, stdout, stderr := tolltest.Run(t, args...)
		if code != cli.ExitUnjudged {
			t.Errorf("toll %s: exit %d, want %d\n%s%s", args[0], code, cli.ExitUnjudged, stdout, stderr)
		}
		if !strings.Contains(stdout+stderr, "partial run") {
			t.Errorf("toll %s does not say the run is partial:\n%s%s", args[0], stdout, stderr)
		}
	}
	if code, stdout, stderr := tolltest.Run(t, "compare", whole, whole, "--fail-on", gate); code != 0 {
		t.Errorf("toll compare of a whole run: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
}
