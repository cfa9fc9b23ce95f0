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

// tailLines returns up to the last n lines of the log open opens, looking only
// at what follows offset start (the size the file had before the service
// started) and at most at its last maxTailBytes. A line cut by that window
// (the end of a line longer than the window) is kept, marked truncated,
// when fewer than n whole lines follow it. Each line is made safe to print
// (printable) and at most about maxLineBytes long.
func tailLines(open opener, start int64, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	f, err := open(os.O_RDONLY)
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

// quoteLine returns a log line as an error quotes it: its terminal escape
// sequences dropped, printable, and at most about maxLineBytes, its start and end kept around a note of what
// was left out. A partial line, whose start was not read, keeps its end
// behind truncatedMark.
func quoteLine(l []byte, partial bool) string {
	l = stripEscapes(l)
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

// stripEscapes returns l without the terminal escape sequences it holds
// whole: CSI sequences (colours, cursor moves: ESC [ … final byte), OSC,
// DCS, SOS, PM and APC strings ended by BEL or ESC \ (a window title), and
// the two-byte escapes (ESC c, ESC M, ESC ( B). An escape that is not
// complete is left for printable to write as \xNN.
func stripEscapes(l []byte) []byte {
	i := bytes.IndexByte(l, 0x1b)
	if i < 0 {
		return l
	}
	out := make([]byte, 0, len(l))
	for i >= 0 {
		out = append(out, l[:i]...)
		n := escapeLen(l[i:])
		if n == 0 {
			out = append(out, l[i])
			n = 1
		}
		l = l[i+n:]
		i = bytes.IndexByte(l, 0x1b)
	}
	return append(out, l...)
}

// escapeLen returns the length of the escape sequence at the start of b,
// which begins with ESC, or 0 if b does not begin with a whole one.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch c := b[1]; {
	case c == '[': // CSI: parameters 0x30–0x3f, intermediates 0x20–0x2f, a final byte 0x40–0x7e
		j := 2
		for j < len(b) && b[j] >= 0x30 && b[j] <= 0x3f {
			j++
		}
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
			j++
		}
		if j < len(b) && b[j] >= 0x40 && b[j] <= 0x7e {
			return j + 1
		}
		return 0
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_': // a string ended by BEL or ST
		for j := 2; j < len(b); j++ {
			switch {
			case b[j] == 0x07:
				return j + 1
			case b[j] == 0x1b && j+1 < len(b) && b[j+1] == '\\':
				return j + 2
			}
		}
		return 0
	case c >= 0x20 && c <= 0x2f: // intermediates, then a final byte: ESC ( B
		j := 2
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
			j++
		}
		if j < len(b) && b[j] >= 0x30 && b[j] <= 0x7e {
			return j + 1
		}
		return 0
	case c >= 0x30 && c <= 0x7e: // ESC c, ESC M, ESC 7, …
		return 2
	}
	return 0
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

// capLog keeps the log open opens under limit bytes: once it is larger, it
// keeps the log's last maxTailBytes behind a line saying how much was
// dropped, and returns how many bytes it dropped. The service goes on
// appending (its log is opened O_APPEND), after what is kept; what it
// writes while the end is copied may be lost.
func capLog(open opener, limit int64) (int64, error) {
	f, err := open(os.O_RDWR | os.O_APPEND)
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

// maxHeadBytes bounds how much of the start of a log logExcerpt reads for
// the service's first lines.
const maxHeadBytes = 16 << 10

// logEntry is a run of identical lines of a log, quoted once.
type logEntry struct {
	text    []byte
	partial bool  // the line began before what was read
	count   int   // how many identical lines in a row
	start   int64 // the run's first byte in the log
	end     int64 // the offset past the run's last line and its newline
}

// quote returns the entry as an error quotes it (see quoteLine), with how
// many times it was repeated.
func (e logEntry) quote() string {
	q := quoteLine(e.text, e.partial)
	if e.count > 1 {
		q += fmt.Sprintf(" (repeated %d times)", e.count)
	}
	return q
}

// splitEntries splits buf, read from offset off of a log, into its lines,
// each run of lines that are the same once their escape sequences are
// dropped made one entry. With partial, the first line began before buf.
func splitEntries(buf []byte, off int64, partial bool) []logEntry {
	var es []logEntry
	var last []byte // the last entry's text, its escapes dropped
	for len(buf) > 0 {
		line, n := buf, len(buf)
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, n = buf[:i], i+1
		}
		clean := stripEscapes(line)
		if k := len(es) - 1; k >= 0 && !es[k].partial && bytes.Equal(last, clean) {
			es[k].count++
			es[k].end = off + int64(n)
		} else {
			es = append(es, logEntry{text: line, partial: partial && len(es) == 0, count: 1, start: off, end: off + int64(n)})
			last = clean
		}
		off += int64(n)
		buf = buf[n:]
	}
	return es
}

// quoteEntries quotes each entry.
func quoteEntries(es []logEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.quote()
	}
	return out
}

// logExcerpt returns what an error quotes of the log open opens since offset
// start (the size it had before the service started): at most n lines, a
// run of identical lines (the access log of readiness checks) counted as
// one and said to be repeated, each made safe to print (quoteLine). When
// the log holds more, the excerpt keeps its first n/3 lines (the service's
// start-up, which says what it listens on and why it may fail) and its
// last, around a line saying how much was left out, and head is the
// number of first lines; head is 0 when the excerpt is the whole log or,
// for n below 3, its end. It reads at most the log's first maxHeadBytes
// and last maxTailBytes.
func logExcerpt(open opener, start int64, n int) (lines []string, head int, err error) {
	if n <= 0 {
		return nil, 0, nil
	}
	f, err := open(os.O_RDONLY)
	if err != nil {
		return nil, 0, fmt.Errorf("log excerpt: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("log excerpt: %w", err)
	}
	size := info.Size()
	if start > size {
		start = 0 // truncated since
	}
	read := func(from, to int64) ([]byte, error) {
		buf := make([]byte, to-from)
		if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
			return nil, fmt.Errorf("log excerpt: %w", err)
		}
		return buf, nil
	}
	headN := n / 3
	tailN := n - headN - 1
	if headN == 0 {
		tailN = n
	}

	if headN == 0 || size-start <= maxHeadBytes+maxTailBytes {
		from := max(start, size-maxTailBytes)
		if headN > 0 {
			from = start
		}
		buf, err := read(from, size)
		if err != nil {
			return nil, 0, err
		}
		es := splitEntries(buf, from, from > start)
		if len(es) <= n {
			return quoteEntries(es), 0, nil
		}
		if headN == 0 {
			if es[0].partial && len(es) > n {
				es = es[1:]
			}
			return quoteEntries(es[len(es)-n:]), 0, nil
		}
		left := 0
		for _, e := range es[headN : len(es)-tailN] {
			left += e.count
		}
		lines = append(quoteEntries(es[:headN]), fmt.Sprintf("… (%d lines left out) …", left))
		return append(lines, quoteEntries(es[len(es)-tailN:])...), headN, nil
	}

	// The log is longer than both windows, which do not meet.
	buf, err := read(start, start+maxHeadBytes)
	if err != nil {
		return nil, 0, err
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i+1] // whole lines, unless the first fills the window
	}
	hs := splitEntries(buf, start, false)
	hs = hs[:min(headN, len(hs))]
	from := size - maxTailBytes
	if buf, err = read(from, size); err != nil {
		return nil, 0, err
	}
	ts := splitEntries(buf, from, true)
	if ts[0].partial && len(ts) > tailN {
		ts = ts[1:]
	}
	ts = ts[max(0, len(ts)-tailN):]
	lines = append(quoteEntries(hs), fmt.Sprintf("… (%d bytes left out) …", ts[0].start-hs[len(hs)-1].end))
	return append(lines, quoteEntries(ts)...), len(hs), nil
}
