package jvm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// NMT is the part of a JVM's Native Memory Tracking summary toll reports,
// in bytes.
type NMT struct {
	// Committed is the JVM's total committed memory: heap, metaspace, code
	// cache, thread stacks, GC structures, direct buffers (in "Other")
	// and the JVM's own mallocs.
	Committed uint64
	// HeapCommitted is the Java heap's committed memory.
	HeapCommitted uint64
}

// OffHeap is what the JVM has committed besides its heap.
func (n NMT) OffHeap() uint64 {
	if n.Committed < n.HeapCommitted {
		return 0
	}
	return n.Committed - n.HeapCommitted
}

// ErrNMTDisabled is returned when the JVM runs without Native Memory
// Tracking, which only a flag at its start turns on.
var ErrNMTDisabled = errors.New("native memory tracking is not enabled (start the JVM with -XX:NativeMemoryTracking=summary)")

// reNMTCommitted finds a "committed=NNN[KB|MB|GB]" figure of a summary line.
var reNMTCommitted = regexp.MustCompile(`committed=(\d+)(KB|MB|GB|B)?`)

// ParseNMT reads the output of jcmd PID VM.native_memory summary: the
// "Total:" line's committed figure and the "Java Heap" line's.
func ParseNMT(r io.Reader) (NMT, error) {
	var n NMT
	var total, heap bool
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.Contains(line, "Native memory tracking is not enabled"):
			return NMT{}, ErrNMTDisabled
		case strings.HasPrefix(line, "Total:") && !total:
			v, err := nmtCommitted(line)
			if err != nil {
				return NMT{}, fmt.Errorf("nmt total: %w", err)
			}
			n.Committed, total = v, true
		case strings.HasPrefix(strings.TrimLeft(line, "- "), "Java Heap (") && !heap:
			v, err := nmtCommitted(line)
			if err != nil {
				return NMT{}, fmt.Errorf("nmt java heap: %w", err)
			}
			n.HeapCommitted, heap = v, true
		}
	}
	if err := sc.Err(); err != nil {
		return NMT{}, err
	}
	if !total || !heap {
		return NMT{}, errors.New("no NMT summary (no Total or Java Heap line)")
	}
	return n, nil
}

// nmtCommitted returns the committed figure of a summary line in bytes.
// jcmd prints KB unless asked for another scale.
func nmtCommitted(line string) (uint64, error) {
	m := reNMTCommitted.FindStringSubmatch(line)
	if m == nil {
		return 0, fmt.Errorf("no committed= in %q", line)
	}
	v, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("committed= in %q: %w", line, err)
	}
	scale := map[string]uint64{"": 1 << 10, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "B": 1}[m[2]]
	return v * scale, nil
}

// NMTEnabled reports whether the JVM was started with Native Memory
// Tracking on, from its arguments in the hsperfdata file, so that toll
// attaches only to a JVM that can answer.
func (r *Reader) NMTEnabled() bool {
	args, _ := r.String("java.rt.vmArgs")
	flags, _ := r.String("java.rt.vmFlags")
	for _, a := range strings.Fields(args + " " + flags) {
		if v, ok := strings.CutPrefix(a, "-XX:NativeMemoryTracking="); ok {
			return v == "summary" || v == "detail"
		}
	}
	return false
}

// ReadNMT runs jcmd PID VM.native_memory summary and parses its output.
// jcmd attaches to the JVM (its Attach Listener thread answers), which is
// why toll does it only when asked, once per trial. jcmd must be on PATH
// and run as the JVM's user; the JVM must see the same /tmp.
func ReadNMT(ctx context.Context, pid int) (NMT, error) {
	out, err := exec.CommandContext(ctx, "jcmd", strconv.Itoa(pid), "VM.native_memory", "summary").CombinedOutput()
	if err != nil {
		return NMT{}, fmt.Errorf("jcmd %d VM.native_memory summary: %w: %s", pid, err, lastLine(out))
	}
	n, err := ParseNMT(bytes.NewReader(out))
	if err != nil {
		return NMT{}, fmt.Errorf("jcmd %d VM.native_memory summary: %w", pid, err)
	}
	return n, nil
}

// lastLine returns the last non-empty line of out, for an error.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
