package profile

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// scriptHeader matches the first line of a sample in perf script's output
// with -F comm,pid,tid,time,period --ns (or comm,tid,...): the thread's
// name (which may hold spaces), its process's ID and a slash (absent
// without pid), its ID, the time in seconds with nanoseconds, and the
// period. A recording of every CPU holds samples of tasks perf could not
// name, ":-1 16908/-1": their IDs may be -1.
var scriptHeader = regexp.MustCompile(`^(.*\S)\s+(?:(-?\d+)/)?(-?\d+)\s+(\d+)\.(\d{9}):\s+(\d+)\s*$`)

// scriptSample is one sample as perf script prints it.
type scriptSample struct {
	thread string
	pid    int   // the thread's process; 0 when perf script did not print it
	ns     int64 // the sample's time on the clock perf recorded with
	period int64
	frames []Frame
}

// parseScript reads perf script's output and calls fn with each sample: a
// line with the sample's thread, time and period, then one line per frame,
// each indented with a tab, and a blank line.
func parseScript(r io.Reader, fn func(scriptSample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var cur *scriptSample
	line := 0
	flush := func() {
		if cur != nil {
			fn(*cur)
			cur = nil
		}
	}
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			flush()
			continue
		}
		if text[0] != '\t' {
			// perf pads a short thread name with spaces on the left.
			flush()
			m := scriptHeader.FindStringSubmatch(strings.TrimLeft(text, " "))
			if m == nil {
				return fmt.Errorf("perf script, line %d: not a sample's first line: %q", line, text)
			}
			pid, _ := strconv.Atoi(m[2])
			sec, _ := strconv.ParseInt(m[4], 10, 64)
			nsec, _ := strconv.ParseInt(m[5], 10, 64)
			period, _ := strconv.ParseInt(m[6], 10, 64)
			cur = &scriptSample{thread: m[1], pid: pid, ns: sec*1e9 + nsec, period: period}
			continue
		}
		if cur == nil {
			return fmt.Errorf("perf script, line %d: a frame before any sample: %q", line, text)
		}
		cur.frames = append(cur.frames, parseFrame(strings.TrimSpace(text)))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("perf script: %w", err)
	}
	flush()
	return nil
}

// parseFrame parses one frame line, "ADDR SYMBOL (MODULE)". A symbol perf
// could not name is "[unknown]"; it is named after its module instead, so
// that unnamed code of different files stays apart.
func parseFrame(s string) Frame {
	addr, rest, _ := strings.Cut(s, " ")
	rest = strings.TrimSpace(rest)
	var f Frame
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		f.Function, f.Module = rest[:i], rest[i+2:len(rest)-1]
	} else {
		f.Function = rest
	}
	if f.Module != "" && !strings.HasPrefix(f.Module, "[") {
		f.path = f.Module
		f.Module = filepath.Base(f.Module)
	}
	if f.Function == "" || f.Function == "[unknown]" {
		f.addr, _ = strconv.ParseUint(addr, 16, 64)
		f.Function = "[unknown " + f.Module + "]"
	}
	return f
}
