package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTailLines checks which lines of a log an error quotes and how: the
// last n, made safe to print, a line cut by the window kept and marked.
func TestTailLines(t *testing.T) {
	long := strings.Repeat("x", maxTailBytes)
	tests := []struct {
		name    string
		content string
		start   int64
		n       int
		want    []string
	}{
		{"empty", "", 0, 5, nil},
		{"fewer lines than asked", "a\nb\n", 0, 5, []string{"a", "b"}},
		{"last n", "a\nb\nc\nd\n", 0, 2, []string{"c", "d"}},
		{"no final newline", "a\nb", 0, 5, []string{"a", "b"}},
		{"after start", "old\nnew\n", 4, 5, []string{"new"}},
		{"start past end", "a\n", 100, 5, []string{"a"}},
		{"zero", "a\n", 0, 0, nil},
		{"long log keeps whole lines", "first\n" + long + "\nlast\n", 0, 1, []string{"last"}},
		{"a line longer than the window keeps its end", "first\n" + long + "\nlast\n", 0, 5, []string{truncatedMark + long[:maxLineBytes], "last"}},
		{"escapes are neutralised", "ok\n\x1b[2J\x1b]0;PWNED\x07 \x9b1m \u009b2m \xff tab\there\n", 0, 5, []string{"ok", ` \x9b1m \xc2\x9b2m \xff tab` + "\there"}},
		{"colours are dropped", "\x1b[31mERROR\x1b[0m \x1b[1;33m404\x1b[m \x1b(Bdone\n", 0, 5, []string{"ERROR 404 done"}},
		{"an unended escape is written out", "title \x1b]0;PWNED\n", 0, 5, []string{`title \x1b]0;PWNED`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := tailLines(pathOpener(path), tt.start, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("tailLines = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTailLinesLongLine checks that a log holding one line far longer
// than the window read (a service writing megabytes without a newline) is
// not reported as empty, and that any line an error quotes is bounded.
func TestTailLinesLongLine(t *testing.T) {
	tests := []struct {
		name, content string
		partial       bool
	}{
		{"one 8 MiB line", strings.Repeat("y", 8<<20) + "END", true},
		{"one 8 MiB line and a newline", strings.Repeat("y", 8<<20) + "END\n", true},
		{"a 40 KiB line within the window", "start " + strings.Repeat("z", 40<<10) + " END\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := tailLines(pathOpener(path), 0, 15)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("tailLines = %d lines, want the one line", len(got))
			}
			l := got[0]
			if len(l) > maxLineBytes+100 || !strings.HasSuffix(l, "END") {
				t.Errorf("line of %d bytes ending %q: want at most about %d, ending as the log does", len(l), l[max(0, len(l)-10):], maxLineBytes)
			}
			if strings.HasPrefix(l, truncatedMark) != tt.partial {
				t.Errorf("line %.40q…: marked truncated %v, want %v", l, !tt.partial, tt.partial)
			}
			if !tt.partial && (!strings.HasPrefix(l, "start ") || !strings.Contains(l, "bytes left out")) {
				t.Errorf("line %.40q…: want its start, and a note of what was left out", l)
			}
			msg := (&ExitError{Name: "svc", Log: got}).Error()
			if strings.Contains(msg, "log is empty") {
				t.Errorf("error %.80q… says the log is empty", msg)
			}
		})
	}
}

// TestCapLog checks that a log over its limit keeps its end behind a note
// of what was dropped, and that one under it is left alone.
func TestCapLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	content := b.String()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if dropped, err := capLog(pathOpener(path), 4<<20); err != nil || dropped != 0 {
		t.Fatalf("under the limit: dropped %d, %v", dropped, err)
	}
	dropped, err := capLog(pathOpener(path), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) > 1<<20 || dropped != int64(len(content)-maxTailBytes) {
		t.Errorf("log is %d bytes, dropped %d: want under the limit, all but the last %d dropped", len(data), dropped, maxTailBytes)
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	if !strings.Contains(first, fmt.Sprintf("its first %d bytes were dropped", dropped)) {
		t.Errorf("first line %q: want a note of what was dropped", first)
	}
	if !strings.HasSuffix(content, rest) || len(rest) != maxTailBytes {
		t.Errorf("kept %d bytes, want the log's last %d", len(rest), maxTailBytes)
	}
}

// TestServiceLogCapped checks that a running service's log is kept under
// Spec.LogLimit, and that its last lines are still those an error quotes.
func TestServiceLogCapped(t *testing.T) {
	spec := shSpec(t, "chatty", `i=0; while [ $i -lt 40000 ]; do echo "request $i done, all well, nothing to see here"; i=$((i+1)); done; echo last words; exec sleep 100`)
	spec.LogLimit = 256 << 10
	s, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(0)
	deadline := time.Now().Add(20 * time.Second)
	for {
		tail := s.LogTail(1)
		info, err := os.Stat(spec.LogPath)
		if err == nil && info.Size() <= spec.LogLimit && len(tail) == 1 && tail[0] == "last words" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %d bytes (limit %d), last line %q after 20 s", info.Size(), spec.LogLimit, tail)
		}
		time.Sleep(50 * time.Millisecond)
	}
	data, err := os.ReadFile(spec.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "[toll: this log passed its limit") {
		t.Errorf("log begins %.60q: want the note of what was dropped", data)
	}
}

// TestLogExcerpt checks what of a log an error about a service quotes:
// runs of identical lines (an access log of readiness checks, coloured)
// once, said to be repeated, and, when the log holds more than the lines
// asked for, its first lines (the service's start-up) as well as its last.
func TestLogExcerpt(t *testing.T) {
	startup := "* Serving Flask app 'app'\n* Running on http://127.0.0.1:5000\nPress CTRL+C to quit\n"
	access := "127.0.0.1 - - [01/Dec/2026 10:00:00] \"\x1b[33mGET /health HTTP/1.1\x1b[0m\" 404 -\n"
	numbered := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "request %d\n", i)
		}
		return b.String()
	}
	long := strings.Repeat("z", 60<<10)
	tests := []struct {
		name     string
		content  string
		n        int
		want     []string
		wantHead int
	}{
		{"short log whole", "a\nb\n", 15, []string{"a", "b"}, 0},
		{"empty", "", 15, nil, 0},
		{
			"repeated lines once, escapes dropped",
			startup + strings.Repeat(access, 15),
			15,
			[]string{"* Serving Flask app 'app'", "* Running on http://127.0.0.1:5000", "Press CTRL+C to quit",
				`127.0.0.1 - - [01/Dec/2026 10:00:00] "GET /health HTTP/1.1" 404 - (repeated 15 times)`},
			0,
		},
		{
			"first and last lines",
			startup + numbered(0, 100),
			15,
			append([]string{"* Serving Flask app 'app'", "* Running on http://127.0.0.1:5000", "Press CTRL+C to quit",
				"request 0", "request 1", "… (89 lines left out) …"}, strings.Split(strings.TrimSpace(numbered(91, 100)), "\n")...),
			5,
		},
		{
			"a repeated line at the end counts once",
			startup + numbered(0, 100) + strings.Repeat(access, 200),
			15,
			append(append([]string{"* Serving Flask app 'app'", "* Running on http://127.0.0.1:5000", "Press CTRL+C to quit",
				"request 0", "request 1", "… (90 lines left out) …"}, strings.Split(strings.TrimSpace(numbered(92, 100)), "\n")...),
				`127.0.0.1 - - [01/Dec/2026 10:00:00] "GET /health HTTP/1.1" 404 - (repeated 200 times)`),
			5,
		},
		{
			"a log longer than both windows",
			startup + numbered(0, 10000),
			15,
			append([]string{"* Serving Flask app 'app'", "* Running on http://127.0.0.1:5000", "Press CTRL+C to quit",
				"request 0", "request 1", fmt.Sprintf("… (%d bytes left out) …", len(numbered(2, 9991)))}, strings.Split(strings.TrimSpace(numbered(9991, 10000)), "\n")...),
			5,
		},
		{
			"fewer than three lines asked: the end",
			startup + numbered(0, 100),
			2,
			[]string{"request 98", "request 99"},
			0,
		},
		{
			"long lines: a line cut by the window is marked",
			"first\n" + long + "\n" + long + "\nlast\n",
			15,
			[]string{"first", fmt.Sprintf("… (%d bytes left out) …", 2*len(long)+2+len("last\n")-maxTailBytes), truncatedMark + long[:maxLineBytes], quoteLine([]byte(long), false), "last"},
			1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, head, err := logExcerpt(pathOpener(path), 0, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) || head != tt.wantHead {
				t.Errorf("logExcerpt = %d first lines of\n%q\nwant %d of\n%q", head, got, tt.wantHead, tt.want)
			}
		})
	}
}

// pathOpener opens the log at path, as a Spec with no OpenLog does.
func pathOpener(path string) opener { return (&Spec{LogPath: path}).logOpener() }
