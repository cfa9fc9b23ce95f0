package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// v2CPUStat is the part of a v2 cpu.stat file toll uses. usage_usec,
// user_usec and system_usec are always there; the throttling fields only
// when the cpu controller is enabled for the cgroup.
type v2CPUStat struct {
	UsageUsec, UserUsec, SystemUsec uint64
	NrPeriods, NrThrottled          uint64
	ThrottledUsec                   uint64
}

// parseV2CPUStat parses a v2 cpu.stat file:
//
//	usage_usec 1203498
//	user_usec 1002032
//	system_usec 201466
//	nr_periods 24
//	nr_throttled 23
//	throttled_usec 1398547
func parseV2CPUStat(b []byte) (v2CPUStat, error) {
	var s v2CPUStat
	for {
		k, v, rest, err := nextKV(b)
		if err != nil || k == nil {
			return s, err
		}
		b = rest
		switch string(k) {
		case "usage_usec":
			s.UsageUsec = v
		case "user_usec":
			s.UserUsec = v
		case "system_usec":
			s.SystemUsec = v
		case "nr_periods":
			s.NrPeriods = v
		case "nr_throttled":
			s.NrThrottled = v
		case "throttled_usec":
			s.ThrottledUsec = v
		}
	}
}

// parseV2CPUMax parses a v2 cpu.max file ("$MAX $PERIOD", MAX may be "max").
// quota is -1 when there is no limit.
func parseV2CPUMax(b []byte) (quota int64, period uint64, err error) {
	f := bytes.Fields(b)
	if len(f) != 2 {
		return 0, 0, errSyntax(b)
	}
	if period, err = parseUint(f[1]); err != nil {
		return 0, 0, err
	}
	if string(f[0]) == "max" {
		return -1, period, nil
	}
	q, err := parseUint(f[0])
	if err != nil {
		return 0, 0, err
	}
	return int64(q), period, nil
}

// statV2 reads cpu.stat, memory.current and memory.peak.
func (g *Group) statV2(s *Stat) error {
	var buf [statBufSize]byte
	b, err := readInto(g.cpuStat, buf[:])
	if err != nil {
		return err
	}
	cs, err := parseV2CPUStat(b)
	if err != nil {
		return fmt.Errorf("parse %s: %w", g.cpuStat, err)
	}
	s.CPU = usec(cs.UsageUsec)
	s.User = usec(cs.UserUsec)
	s.System = usec(cs.SystemUsec)
	s.NrThrottled = cs.NrThrottled
	s.Throttled = usec(cs.ThrottledUsec)
	// memory.peak is missing before Linux 5.19; both are missing if the
	// memory controller isn't enabled, which Detect rules out for real
	// trees.
	if s.MemoryCurrent, err = readOptional(g.memCurrent, buf[:]); err != nil {
		return err
	}
	if s.MemoryPeak, err = readOptional(g.memPeak, buf[:]); err != nil {
		return err
	}
	return nil
}

// readOptional reads a single-number file, 0 if it doesn't exist.
func readOptional(path string, buf []byte) (uint64, error) {
	b, err := readInto(path, buf)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := parseSingle(b)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	return v, nil
}

func usec(v uint64) time.Duration { return time.Duration(v) * time.Microsecond }
