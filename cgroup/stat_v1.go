package cgroup

import (
	"fmt"
	"time"
)

// userHZ is the unit of cpuacct.stat: USER_HZ, which is 100 on every Linux
// architecture (sysconf(_SC_CLK_TCK)).
const userHZ = 100

// v1CPUAcctStat is a v1 cpuacct.stat file, in USER_HZ ticks.
type v1CPUAcctStat struct {
	UserTicks, SystemTicks uint64
}

// parseV1CPUAcctStat parses a v1 cpuacct.stat file:
//
//	user 60
//	system 3
func parseV1CPUAcctStat(b []byte) (v1CPUAcctStat, error) {
	var s v1CPUAcctStat
	for {
		k, v, rest, err := nextKV(b)
		if err != nil || k == nil {
			return s, err
		}
		b = rest
		switch string(k) {
		case "user":
			s.UserTicks = v
		case "system":
			s.SystemTicks = v
		}
	}
}

// v1CPUStat is the throttling part of a v1 cpu.stat file.
type v1CPUStat struct {
	NrPeriods, NrThrottled uint64
	ThrottledNs            uint64
}

// parseV1CPUStat parses a v1 cpu.stat file:
//
//	nr_periods 13
//	nr_throttled 12
//	throttled_time 598033219
func parseV1CPUStat(b []byte) (v1CPUStat, error) {
	var s v1CPUStat
	for {
		k, v, rest, err := nextKV(b)
		if err != nil || k == nil {
			return s, err
		}
		b = rest
		switch string(k) {
		case "nr_periods":
			s.NrPeriods = v
		case "nr_throttled":
			s.NrThrottled = v
		case "throttled_time":
			s.ThrottledNs = v
		}
	}
}

// ticks converts USER_HZ ticks to a duration.
func ticks(n uint64) time.Duration { return time.Duration(n) * (time.Second / userHZ) }

// statV1 reads cpuacct.usage, cpuacct.stat, cpu.stat,
// memory.usage_in_bytes and memory.max_usage_in_bytes.
func (g *Group) statV1(s *Stat) error {
	var buf [statBufSize]byte
	usage, err := g.readSingle(g.cpuacctUsage, buf[:])
	if err != nil {
		return err
	}
	s.CPU = time.Duration(usage)

	b, err := readInto(g.cpuacctStat, buf[:])
	if err != nil {
		return err
	}
	as, err := parseV1CPUAcctStat(b)
	if err != nil {
		return fmt.Errorf("parse %s: %w", g.cpuacctStat, err)
	}
	s.User, s.System = ticks(as.UserTicks), ticks(as.SystemTicks)

	if b, err = readInto(g.cpuStat, buf[:]); err != nil {
		return err
	}
	cs, err := parseV1CPUStat(b)
	if err != nil {
		return fmt.Errorf("parse %s: %w", g.cpuStat, err)
	}
	s.NrThrottled, s.Throttled = cs.NrThrottled, time.Duration(cs.ThrottledNs)

	if s.MemoryCurrent, err = g.readSingle(g.memCurrent, buf[:]); err != nil {
		return err
	}
	if s.MemoryPeak, err = g.readSingle(g.memPeak, buf[:]); err != nil {
		return err
	}
	return nil
}

// readSingle reads a file holding one number.
func (g *Group) readSingle(path string, buf []byte) (uint64, error) {
	b, err := readInto(path, buf)
	if err != nil {
		return 0, err
	}
	v, err := parseSingle(b)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	return v, nil
}
