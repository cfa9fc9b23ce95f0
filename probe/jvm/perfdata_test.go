package jvm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fixtures in testdata are hsperfdata files copied from OpenJDK 17
// JVMs (default G1, and -XX:+UseSerialGC) after some HTTP traffic and a
// GC, each with what jstat printed for the frozen copy:
//
//	jstat -J-Djstat.showUnsupported=true -snap file:///path > NAME.snap
//	jstat -gc file:///path > NAME.jstat-gc  (and -class, -gccapacity)
var fixtures = []string{"g1", "serial"}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".hsperfdata"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readSnap reads jstat -snap output: name=value lines, strings quoted.
func readSnap(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".snap"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := make(map[string]string)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("%s.snap: bad line %q", name, sc.Text())
		}
		m[k] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// parseJstat parses jstat's two-line table output into column → value;
// "-" (not applicable) becomes NaN.
func parseJstat(t testing.TB, out string) map[string]float64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("jstat output has %d lines: %q", len(lines), out)
	}
	head, vals := strings.Fields(lines[0]), strings.Fields(lines[len(lines)-1])
	if len(head) != len(vals) {
		t.Fatalf("jstat output: %d columns, %d values: %q", len(head), len(vals), out)
	}
	m := make(map[string]float64)
	for i, h := range head {
		if vals[i] == "-" {
			m[h] = math.NaN()
			continue
		}
		v, err := strconv.ParseFloat(vals[i], 64)
		if err != nil {
			t.Fatalf("jstat column %s: %v", h, err)
		}
		if _, dup := m[h]; !dup { // -class has two Bytes columns; keep the first
			m[h] = v
		}
	}
	return m
}

func readJstat(t *testing.T, name, option string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".jstat-"+option))
	if err != nil {
		t.Fatal(err)
	}
	return parseJstat(t, string(b))
}

// TestFixtureEntries checks every entry against what jstat -snap read from
// the same file.
func TestFixtureEntries(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			b := readFixture(t, name)
			snap := readSnap(t, name)
			for _, open := range []struct {
				how string
				get func() (*Reader, error)
			}{
				{"Parse", func() (*Reader, error) { return Parse(b) }},
				{"Open", func() (*Reader, error) { return Open(filepath.Join("testdata", name+".hsperfdata")) }},
			} {
				r, err := open.get()
				if err != nil {
					t.Fatalf("%s: %v", open.how, err)
				}
				defer r.Close()

				// jstat adds sun.perfdata.* from the prologue.
				p := r.prologue()
				for k, want := range map[string]int64{
					"sun.perfdata.majorVersion": int64(p.major),
					"sun.perfdata.minorVersion": int64(p.minor),
					"sun.perfdata.used":         int64(p.used),
					"sun.perfdata.overflow":     int64(p.overflow),
					"sun.perfdata.timestamp":    p.modTime,
					"sun.perfdata.size":         int64(len(b)),
				} {
					if got := snap[k]; got != strconv.FormatInt(want, 10) {
						t.Errorf("%s: %s: jstat says %s, prologue %d", open.how, k, got, want)
					}
				}

				var want []string
				for k, v := range snap {
					if strings.HasPrefix(k, "sun.perfdata.") {
						continue
					}
					want = append(want, k)
					if s, ok := strings.CutPrefix(v, `"`); ok {
						s, _ = strings.CutSuffix(s, `"`)
						if got, ok := r.String(k); !ok || got != s {
							t.Errorf("%s: String(%q) = %q, %v; jstat says %q", open.how, k, got, ok, s)
						}
						if _, ok := r.Long(k); ok {
							t.Errorf("%s: Long(%q) of a string entry reports a value", open.how, k)
						}
						continue
					}
					w, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						t.Fatalf("%s.snap: %s=%s: %v", name, k, v, err)
					}
					if got, ok := r.Long(k); !ok || got != w {
						t.Errorf("%s: Long(%q) = %d, %v; jstat says %d", open.how, k, got, ok, w)
					}
					if _, ok := r.String(k); ok {
						t.Errorf("%s: String(%q) of a long entry reports a value", open.how, k)
					}
				}
				slices.Sort(want)
				if got := r.Names(); !slices.Equal(got, want) {
					t.Errorf("%s: Names() has %d names, jstat -snap %d", open.how, len(got), len(want))
				}
				if _, ok := r.Long("no.such.entry"); ok {
					t.Errorf("Long of a missing entry reports a value")
				}
			}
		})
	}
}

// TestFixtureCounters checks Counters against what jstat -gc, -gccapacity
// and -class printed for the same file. jstat prints KiB to 0.1 and
// seconds to 0.001, rounded.
func TestFixtureCounters(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			r, err := Parse(readFixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			c, err := r.Counters()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", c)
			checkAgainstJstat(t, c, c, readJstat(t, name, "gc"), readJstat(t, name, "gccapacity"), readJstat(t, name, "class"), 0)

			freq, _ := r.Long("sun.os.hrt.frequency")
			tk, _ := r.Long("sun.os.hrt.ticks")
			if freq != 1e9 || c.Uptime != time.Duration(tk) {
				t.Errorf("Uptime %v from %d ticks at %d Hz", c.Uptime, tk, freq)
			}
			if len(c.Generations) != 2 || c.Generations[1].Name != "old" {
				t.Errorf("Generations %+v, want two, the second old", c.Generations)
			}
			if c.MetaspaceUsed == 0 || c.ClassSpaceUsed == 0 || c.ClassSpaceUsed > c.MetaspaceUsed {
				t.Errorf("metaspace used %d, class space used %d", c.MetaspaceUsed, c.ClassSpaceUsed)
			}
			if c.Threads < 2 || c.DaemonThreads >= c.Threads || c.PeakThreads < c.Threads {
				t.Errorf("threads %d, daemon %d, peak %d", c.Threads, c.DaemonThreads, c.PeakThreads)
			}
			if c.VMStart.Year() < 2020 || c.VMInitDone.Before(c.VMStart) || c.VMInitDone.Sub(c.VMStart) > 10*time.Second {
				t.Errorf("VM started %v, initialized %v", c.VMStart, c.VMInitDone)
			}
			compiles, _ := r.Long("sun.ci.totalCompiles")
			jit, _ := r.Long("java.ci.totalTime")
			if c.JITCompiles != compiles || c.JITCompiles == 0 || c.JITTime != time.Duration(jit) || c.JITTime <= 0 {
				t.Errorf("JIT: %d compiles in %v, want %d in %d ticks at 1 GHz", c.JITCompiles, c.JITTime, compiles, jit)
			}
			if cmd, _ := r.String("sun.rt.javaCommand"); !strings.HasPrefix(cmd, "Srv ") {
				t.Errorf("sun.rt.javaCommand = %q", cmd)
			}
		})
	}
}

// checkAgainstJstat checks that jstat's figures (gc, gccap, class: parsed
// tables) lie between those of Counters read before (a) and after (b) it,
// give or take jstat's rounding, and slack (a fraction) for figures that
// may move in between.
func checkAgainstJstat(t *testing.T, a, b Counters, gc, gccap, class map[string]float64, slack float64) {
	t.Helper()
	const kib = 1024.0
	// between checks jstat's v against our x (from a) and y (from b),
	// converted to jstat's unit, allowing tol of rounding.
	between := func(what string, v, x, y, tol float64) {
		t.Helper()
		lo, hi := min(x, y), max(x, y)
		lo, hi = lo-tol-slack*lo, hi+tol+slack*hi
		if math.IsNaN(v) || v < lo || v > hi {
			t.Errorf("%s: jstat %.3f, toll %.3f then %.3f", what, v, x, y)
		} else {
			t.Logf("%s: jstat %.3f, toll %.3f then %.3f", what, v, x, y)
		}
	}
	sum := func(m map[string]float64, cols ...string) float64 {
		s := 0.0
		for _, c := range cols {
			v, ok := m[c]
			if !ok {
				t.Fatalf("jstat has no column %s", c)
			}
			s += v
		}
		return s
	}
	kb := func(n uint64) float64 { return float64(n) / kib }
	// Each jstat figure is rounded to 0.05 KiB; G1 adds 8 bytes to a space
	// that is empty so as not to report 0.
	between("NGC+OGC (KiB) vs HeapCommitted", sum(gccap, "NGC", "OGC"), kb(a.HeapCommitted), kb(b.HeapCommitted), 0.15)
	// The spaces need not cover their generation: ParallelGC's adaptive
	// sizing leaves some of the young generation's committed memory to
	// neither eden nor a survivor (seen: 512 KiB of 64 MiB).
	spaces := sum(gc, "S0C", "S1C", "EC", "OC")
	between("S0C+S1C+EC+OC (KiB) vs HeapCommitted", spaces, kb(a.HeapCommitted), kb(b.HeapCommitted), 0.25+0.03*kb(max(a.HeapCommitted, b.HeapCommitted)))
	if hi := kb(max(a.HeapCommitted, b.HeapCommitted)); spaces > hi+0.25+slack*hi {
		t.Errorf("S0C+S1C+EC+OC: jstat %.3f KiB, more than HeapCommitted %.3f", spaces, hi)
	}
	between("S0U+S1U+EU+OU (KiB) vs HeapUsed", sum(gc, "S0U", "S1U", "EU", "OU"), kb(a.HeapUsed), kb(b.HeapUsed), 0.25)
	between("MC (KiB) vs MetaspaceCommitted", gc["MC"], kb(a.MetaspaceCommitted), kb(b.MetaspaceCommitted), 0.06)
	between("MU (KiB) vs MetaspaceUsed", gc["MU"], kb(a.MetaspaceUsed), kb(b.MetaspaceUsed), 0.06)
	between("CCSC (KiB) vs ClassSpaceCommitted", gc["CCSC"], kb(a.ClassSpaceCommitted), kb(b.ClassSpaceCommitted), 0.06)
	between("CCSU (KiB) vs ClassSpaceUsed", gc["CCSU"], kb(a.ClassSpaceUsed), kb(b.ClassSpaceUsed), 0.06)
	between("Loaded vs ClassesLoaded", class["Loaded"], float64(a.ClassesLoaded), float64(b.ClassesLoaded), 0)
	between("Unloaded vs ClassesUnloaded", class["Unloaded"], float64(a.ClassesUnloaded), float64(b.ClassesUnloaded), 0)
	secs := func(d time.Duration) float64 { return d.Seconds() }
	between("GCT (s) vs GCTime", gc["GCT"], secs(a.GCTime), secs(b.GCTime), 0.0015)
	// Collectors 0, 1 and 2 are jstat's young, full and concurrent ones.
	for i, col := range []string{"YGC", "FGC", "CGC"} {
		if i >= len(a.Collectors) {
			if !math.IsNaN(gc[col]) {
				t.Errorf("%s: jstat %v, toll has no collector %d", col, gc[col], i)
			}
			continue
		}
		between(col+" vs "+a.Collectors[i].Name, gc[col], float64(a.Collectors[i].Count), float64(b.Collectors[i].Count), 0)
		between(col+"T (s) vs "+a.Collectors[i].Name, gc[col+"T"], secs(a.Collectors[i].Time), secs(b.Collectors[i].Time), 0.0006)
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		t, freq int64
		want    time.Duration
	}{
		{0, 1e9, 0},
		{-5, 1e9, 0},
		{5, 0, 0},
		{1234567891, 1e9, 1234567891},
		{3, 1000, 3 * time.Millisecond},
		{1, 3, 333333333},
		{math.MaxInt64 / 4, 4e9, time.Duration(math.MaxInt64/4) / 4},
		{10 * 365 * 86400 * 3e9, 3e9, 10 * 365 * 24 * time.Hour},
	} {
		if got := ticks(c.t, c.freq); got != c.want {
			t.Errorf("ticks(%d, %d) = %v, want %v", c.t, c.freq, got, c.want)
		}
	}
}

// entryOffsets returns the offset of each entry of fixture b.
func entryOffsets(b []byte) []int {
	le := binary.LittleEndian
	off := int(le.Uint32(b[offEntryOffset:]))
	n := int(le.Uint32(b[offNumEntries:]))
	offs := make([]int, n)
	for i := range offs {
		offs[i] = off
		off += int(le.Uint32(b[off:]))
	}
	return offs
}

func TestParseErrors(t *testing.T) {
	orig := readFixture(t, "g1")
	offs := entryOffsets(orig)
	le := binary.LittleEndian
	for _, c := range []struct {
		name     string
		mod      func([]byte) []byte
		notReady bool
	}{
		{"empty", func(b []byte) []byte { return nil }, true},
		{"short", func(b []byte) []byte { return b[:31] }, true},
		{"no magic yet", func(b []byte) []byte { clear(b[:4]); return b }, true},
		{"not accessible", func(b []byte) []byte { b[offAccessible] = 0; return b }, true},
		{"bad magic", func(b []byte) []byte { b[0] = 0xde; return b }, false},
		{"byte order", func(b []byte) []byte { b[offByteOrder] = 7; return b }, false},
		{"version 1", func(b []byte) []byte { b[offMajor] = 1; return b }, false},
		{"entry offset", func(b []byte) []byte { le.PutUint32(b[offEntryOffset:], uint32(len(b)+1)); return b }, false},
		{"negative entry offset", func(b []byte) []byte { le.PutUint32(b[offEntryOffset:], 0xfffffff0); return b }, false},
		{"too many entries", func(b []byte) []byte { le.PutUint32(b[offNumEntries:], 1<<20); return b }, false},
		{"negative entries", func(b []byte) []byte { le.PutUint32(b[offNumEntries:], 0xffffffff); return b }, false},
		{"entries past the end", func(b []byte) []byte { return b[:offs[len(offs)-1]+8] }, false},
		{"entry length", func(b []byte) []byte { le.PutUint32(b[offs[3]:], 7); return b }, false},
		{"entry length past the end", func(b []byte) []byte { le.PutUint32(b[offs[3]:], 1<<20); return b }, false},
		{"name offset", func(b []byte) []byte { le.PutUint32(b[offs[3]+4:], 2); return b }, false},
		{"name not terminated", func(b []byte) []byte {
			e := b[offs[3]:offs[4]]
			for i := int(le.Uint32(e[4:])); i < len(e); i++ {
				e[i] = 'x'
			}
			return b
		}, false},
		{"vector length", func(b []byte) []byte { le.PutUint32(b[offs[3]+8:], 0x7fffffff); return b }, false},
		{"data offset", func(b []byte) []byte { le.PutUint32(b[offs[3]+16:], 1<<16); return b }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Parse(c.mod(slices.Clone(orig)))
			if err == nil {
				t.Fatalf("Parse succeeded with %d entries", len(r.Names()))
			}
			if got := errors.Is(err, ErrNotReady); got != c.notReady {
				t.Errorf("error %q: ErrNotReady %v, want %v", err, got, c.notReady)
			}
			if !strings.HasPrefix(err.Error(), "jvm: hsperfdata buffer: ") {
				t.Errorf("error %q does not name the buffer", err)
			}
		})
	}
	t.Run("file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "12345")
		if err := os.WriteFile(p, orig[:16], 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(p)
		if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), p) {
			t.Errorf("Open of a 16-byte file: %v", err)
		}
		_, err = Open(filepath.Join(t.TempDir(), "missing"))
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
			t.Errorf("Open of a missing file: %v", err)
		}
	})
}

// TestGrowth checks that a Reader indexes the entries the JVM adds after
// it opened the file, including one counted before it is written.
func TestGrowth(t *testing.T) {
	orig := readFixture(t, "g1")
	offs := entryOffsets(orig)
	le := binary.LittleEndian
	n := len(offs)
	b := slices.Clone(orig)

	// The JVM has counted entry n-1 but not yet written it.
	last := slices.Clone(b[offs[n-1]:])
	clear(b[offs[n-1]:])
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.Names()); got != n-1 {
		t.Errorf("%d names with the last entry unwritten, want %d", got, n-1)
	}
	copy(b[offs[n-1]:], last)
	if got := len(r.Names()); got != n {
		t.Errorf("%d names after the last entry was written, want %d", got, n)
	}

	// Counters follows entries added after the first read.
	le.PutUint32(b[offNumEntries:], 20)
	r, err = Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Counters()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Collectors) != 0 || c.MetaspaceUsed != 0 {
		t.Fatalf("20 entries give collectors %v, metaspace %d", c.Collectors, c.MetaspaceUsed)
	}
	le.PutUint32(b[offNumEntries:], uint32(n))
	c2, err := r.Counters()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Parse(orig)
	c3, _ := want.Counters()
	if len(c2.Collectors) != 3 || c2.MetaspaceUsed != c3.MetaspaceUsed || c2.HeapCommitted != c3.HeapCommitted {
		t.Errorf("after growth: %+v, want %+v", c2, c3)
	}

	// Values are read at each call.
	off := r.entries[r.byName["sun.gc.metaspace.used"]].data
	le.PutUint64(b[off:], 12345)
	if c, _ := r.Counters(); c.MetaspaceUsed != 12345 {
		t.Errorf("MetaspaceUsed %d after the JVM wrote 12345", c.MetaspaceUsed)
	}
}

func TestClose(t *testing.T) {
	r, err := Open(filepath.Join("testdata", "g1.hsperfdata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Counters(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Counters after Close: %v", err)
	}
	if _, ok := r.Long("sun.os.hrt.ticks"); ok {
		t.Errorf("Long after Close reports a value")
	}
	if _, ok := r.String("sun.rt.javaCommand"); ok {
		t.Errorf("String after Close reports a value")
	}
	if n := r.Names(); len(n) != 0 {
		t.Errorf("Names after Close: %d", len(n))
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// exercise reads everything a Reader offers, to find panics.
func exercise(b []byte) {
	r, err := Parse(b)
	if err != nil {
		return
	}
	for _, n := range r.Names() {
		r.Long(n)
		r.String(n)
	}
	r.Counters()
}

// TestCorruption flips bytes of the fixture at random: Parse must fail or
// give a Reader that does not panic.
func TestCorruption(t *testing.T) {
	orig := readFixture(t, "g1")
	used := int(binary.LittleEndian.Uint32(orig[offUsed:]))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		b := slices.Clone(orig)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(used)] = byte(rng.Uint32())
		}
		exercise(b)
	}
}

func FuzzParse(f *testing.F) {
	// Seeds: the first 24 entries of each fixture (the fuzzer is slow on
	// large inputs).
	for _, name := range fixtures {
		b := readFixture(f, name)
		const n = 24
		end := entryOffsets(b)[n]
		b = slices.Clone(b[:end])
		binary.LittleEndian.PutUint32(b[offNumEntries:], n)
		f.Add(b)
	}
	f.Add([]byte{0xca, 0xfe, 0xc0, 0xc0, 1, 2, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) { exercise(b) })
}
