package run

import (
	"os"
	"runtime"
	"strings"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/record"
)

// describeHost reads what the manifest says about the machine. Missing
// facts stay empty rather than failing the run.
func describeHost() record.Host {
	h := record.Host{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	h.Name, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return h
	}
	if cpus, err := fs.CPUInfo(); err == nil && len(cpus) > 0 {
		h.CPUModel = strings.TrimSpace(cpus[0].ModelName)
	}
	if mi, err := fs.Meminfo(); err == nil && mi.MemTotal != nil {
		h.MemoryBytes = *mi.MemTotal * 1024
	}
	return h
}
