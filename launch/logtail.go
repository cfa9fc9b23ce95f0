package launch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	// maxTailBytes bounds how much of the end of a log tailLines reads.
	maxTailBytes = 64 << 10
	// maxLineBytes bounds a log line quoted in an error: a service may
	// write megabytes without a newline, and errors are printed, stored
	// in the manifest and written into reports.
	maxLineBytes = 1 << 10
	// truncatedMark begins a line of which only the end was read.
	truncatedMark = "[truncated] …"
)

// DefaultLogLimit is the size a service's log may reach before toll drops
// all of it but its end (Spec.LogLimit): a service that logs every request
// can write hundreds of megabytes in a run, on the disk of the machine
// being measured.
const DefaultLogLimit = 64 << 20

// logCheckEvery is how often a running service's log size is checked.
const logCheckEvery = time.Second

// tailLines returns up to the last n lines of the file at path, looking only
// at what follows offset start (the size the file had before the service
// started) and at most at its last maxTailBytes. A line cut by that window
// (the end of a line longer than the window) is kept, marked truncated,
// when fewer than n whole lines follow it. Each line is made safe to print
// (printable) and at most about maxLineBytes long.
func tailLines(path string, start int64, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tail log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tail log: %w", err)
	}
	size := info.Size()
	if start > size {
		start = 0 // truncated since
	}
	from := max(start, size-maxTailBytes)
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
		return nil, fmt.Errorf("tail log: %w", err)
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	if len(buf) == 0 {
		return nil, nil
	}
	lines := bytes.Split(buf, []byte("\n"))
	partial := from > start // the first line began before the window
	if partial && len(lines) > n {
		lines, partial = lines[1:], false
	}
	lines = lines[max(0, len(lines)-n):]
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = quoteLine(l, partial && i == 0)
	}
	return out, nil
}

// quoteLine returns a log line as an error quotes it: printable, and at
// most about maxLineBytes, its start and end kept around a note of what
// was left out. A partial line, whose start was not read, keeps its end
// behind truncatedMark.
func quoteLine(l []byte, partial bool) string {
	if partial {
		if len(l) > maxLineBytes {
			l = l[len(l)-maxLineBytes:]
		}
		return truncatedMark + printable(string(trimRuneStart(l)))
	}
	if len(l) <= maxLineBytes {
		return printable(string(l))
	}
	half := maxLineBytes / 2
	head, tail := trimRuneEnd(l[:half]), trimRuneStart(l[len(l)-half:])
	return printable(string(head)) + fmt.Sprintf(" … [%d bytes left out] … ", len(l)-len(head)-len(tail)) + printable(string(tail))
}

// trimRuneStart drops the continuation bytes of a character cut at b's
// start.
func trimRuneStart(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return b
}

// trimRuneEnd drops a character cut at b's end.
func trimRuneEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// printable returns s with every control character but tab (escape
// sequences that would clear a terminal, set its title or move its
// cursor), every C1 control and every invalid byte written as \xNN, so
// that a line of a service's log cannot act on the terminal it is
// printed to, nor on a file it is stored in.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports a character printable writes as \xNN: a C0 control
// but tab, DEL, a C1 control, or an invalid byte.
func unsafeRune(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r <= 0x9f) || r == utf8.RuneError
}

// capLog keeps the log at path under limit bytes: once it is larger, it
// keeps the log's last maxTailBytes behind a line saying how much was
// dropped, and returns how many bytes it dropped. The service goes on
// appending (its log is opened O_APPEND), after what is kept; what it
// writes while the end is copied may be lost.
func capLog(path string, limit int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return 0, fmt.Errorf("cap log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("cap log: %w", err)
	}
	size := info.Size()
	if size <= limit {
		return 0, nil
	}
	keep := make([]byte, min(size, maxTailBytes))
	if _, err := f.ReadAt(keep, size-int64(len(keep))); err != nil && err != io.EOF {
		return 0, fmt.Errorf("cap log: %w", err)
	}
	if err := f.Truncate(0); err != nil {
		return 0, fmt.Errorf("cap log: %w", err)
	}
	dropped := size - int64(len(keep))
	note := fmt.Sprintf("[toll: this log passed its limit of %d bytes at %s: its first %d bytes were dropped, its last %d kept below]\n",
		limit, time.Now().UTC().Format(time.RFC3339), dropped, len(keep))
	if _, err := f.Write(append([]byte(note), keep...)); err != nil {
		return dropped, fmt.Errorf("cap log: %w", err)
	}
	return dropped, nil
}
