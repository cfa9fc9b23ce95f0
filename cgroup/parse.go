package cgroup

import (
	"bytes"
	"errors"
	"fmt"
)

// The parsers below work on file contents, allocate nothing on success and
// ignore keys they don't know, so new kernel fields don't break them.

// errSyntax reports malformed cgroup file contents.
func errSyntax(b []byte) error {
	if len(b) > 64 {
		b = b[:64]
	}
	return fmt.Errorf("malformed %q", string(b))
}

// parseUint parses a decimal uint64 without converting to a string.
func parseUint(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty number")
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errSyntax(b)
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, fmt.Errorf("number %q out of range", string(b))
		}
		v = v*10 + d
	}
	return v, nil
}

// parseSingle parses a file holding one unsigned number, such as
// memory.current or cpuacct.usage.
func parseSingle(b []byte) (uint64, error) {
	return parseUint(bytes.TrimSpace(b))
}

// v1Unlimited is the smallest value treated as "no limit" in v1 limit files,
// which report PAGE_COUNTER_MAX pages in bytes (9223372036854771712 with 4k
// pages).
const v1Unlimited = 1 << 62

// parseLimit parses a memory limit file: v2 memory.max ("max" or bytes) or
// v1 memory.limit_in_bytes (huge when unlimited). No limit is 0.
func parseLimit(b []byte) (uint64, error) {
	b = bytes.TrimSpace(b)
	if string(b) == "max" {
		return 0, nil
	}
	v, err := parseUint(b)
	if err != nil {
		return 0, err
	}
	if v >= v1Unlimited {
		return 0, nil
	}
	return v, nil
}

// nextKV returns the first "key value" line of a flat-keyed cgroup file
// such as cpu.stat or cpuacct.stat and the rest of the file; key is nil at the
// end. A loop over nextKV instead of a callback keeps the file contents from
// escaping to the heap.
func nextKV(b []byte) (key []byte, v uint64, rest []byte, err error) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		i := bytes.IndexByte(line, ' ')
		if i <= 0 {
			return nil, 0, nil, errSyntax(line)
		}
		v, err := parseUint(bytes.TrimSpace(line[i+1:]))
		if err != nil {
			return nil, 0, nil, err
		}
		return line[:i], v, b, nil
	}
	return nil, 0, nil, nil
}
