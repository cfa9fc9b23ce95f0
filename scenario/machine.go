package scenario

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/pin"
)

// machine is what a scenario is checked against beyond its own text: the
// resources of the machine, and of the process, that will run it. A zero
// field is unknown, and the checks that need it are skipped.
type machine struct {
	// online is the CPUs toll may use (its affinity).
	online pin.CPUs
	// memTotal is the machine's memory in bytes (MemTotal).
	memTotal int64
	// noFile is how many file descriptors this process may open
	// (RLIMIT_NOFILE; Go raises the soft limit to the hard one at start).
	noFile uint64
	// ports is how many local ports connections to one address can use
	// (net.ipv4.ip_local_port_range), and portRange that range as written.
	ports     int
	portRange string
}

// defaultPortRange is Linux's default net.ipv4.ip_local_port_range, assumed
// when the file cannot be read.
const defaultPortLo, defaultPortHi = 32768, 60999

// thisMachine reads the machine toll runs on. What it cannot read stays
// unknown, except the local port range, which takes Linux's default.
func thisMachine() machine {
	var m machine
	if cpus, err := pin.Online(); err == nil {
		m.online = cpus
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.memTotal = memTotal(b)
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil {
		m.noFile = rl.Cur
	}
	lo, hi := defaultPortLo, defaultPortHi
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var a, z int
		if n, _ := fmt.Sscan(string(b), &a, &z); n == 2 && a > 0 && z >= a {
			lo, hi = a, z
		}
	}
	m.ports, m.portRange = hi-lo+1, fmt.Sprintf("%d-%d", lo, hi)
	return m
}

// memTotal returns MemTotal from the content of /proc/meminfo, in bytes,
// or 0 if it is not there.
func memTotal(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemTotal:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil || kb <= 0 || kb > 1<<53 {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
