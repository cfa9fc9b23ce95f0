package jvm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tollperf/toll/probe/runtime"
)

// Runtime is the HotSpot JVM as a runtime toll reads (package runtime):
// its hsperfdata counters, mapped without attach, and the CPU of its JIT
// compiler threads from /proc.
type Runtime struct{}

var _ runtime.Runtime = Runtime{}

// Name is "jvm".
func (Runtime) Name() string { return "jvm" }

// Metrics describes the JVM's figures. The two of Native Memory Tracking
// are read once at a trial's end through jcmd (ReadNMT), and the JIT
// compilers' CPU is compared per second of load: toll computes those
// itself (Own).
func (Runtime) Metrics() []runtime.Metric {
	const b, s, n = runtime.Bytes, runtime.Seconds, runtime.Count
	const g, c, start = runtime.Gauge, runtime.Counter, runtime.AtStart
	return []runtime.Metric{
		{Name: "heap_used", Unit: b, Kind: g, Cost: "jvm_heap_used_mib", Label: "JVM heap used",
			Family: "toll_jvm_heap_used_bytes", Help: "JVM heap used.", VariesByStart: true},
		{Name: "heap_committed", Unit: b, Kind: g, Cost: "jvm_heap_committed_mib", Label: "JVM heap committed",
			Family: "toll_jvm_heap_committed_bytes", Help: "JVM heap committed.", VariesByStart: true},
		{Name: "nmt_committed", Unit: b, Kind: g, Cost: "jvm_committed_mib", Label: "JVM committed (NMT total)",
			Family: "toll_jvm_committed_bytes", Help: "JVM total committed memory (Native Memory Tracking).", VariesByStart: true, Own: true},
		{Name: "nmt_offheap", Unit: b, Kind: g, Cost: "jvm_offheap_mib", Label: "JVM off-heap committed (NMT)",
			Family: "toll_jvm_offheap_committed_bytes", Help: "JVM committed memory besides its heap (Native Memory Tracking).", VariesByStart: true, Own: true},
		{Name: "metaspace_used", Unit: b, Kind: g, Cost: "jvm_metaspace_mib", Label: "JVM metaspace used",
			Family: "toll_jvm_metaspace_used_bytes", Help: "JVM metaspace used.", VariesByStart: true},
		// Read 0 until the JVM's first collection.
		{Name: "metaspace_committed", Unit: b, Kind: g, Cost: "jvm_metaspace_committed_mib", Label: "JVM metaspace committed",
			Family: "toll_jvm_metaspace_committed_bytes", Help: "JVM metaspace committed.", VariesByStart: true, Optional: true},
		{Name: "classes_loaded", Unit: n, Kind: g, Cost: "jvm_classes_loaded", Label: "JVM classes loaded",
			Family: "toll_jvm_classes_loaded", Help: "JVM classes loaded.", VariesByStart: true},
		{Name: "threads", Unit: n, Kind: g, Cost: "jvm_threads", Label: "JVM threads",
			Family: "toll_jvm_threads", Help: "JVM threads.", VariesByStart: true, Whole: true},
		{Name: "gc_time", Unit: s, Kind: c, Cost: "jvm_gc_ms_per_s", Label: "JVM GC time",
			Family: "toll_jvm_gc_time_ratio", Help: "Share of wall-clock time the JVM spent in GC.", VariesByStart: true},
		{Name: "gc_count", Unit: n, Kind: c, Cost: "jvm_gcs_per_min", Label: "JVM GCs",
			Family: "toll_jvm_gcs_per_second", Help: "JVM garbage collections per second.", VariesByStart: true},
		{Name: "jit_time", Unit: s, Kind: c, Cost: "jvm_jit_ms_per_s", Label: "JVM JIT compile time",
			Family: "toll_jvm_jit_time_ratio", Help: "Share of wall-clock time the JVM's JIT compilers spent compiling: above zero under steady load, the JVM was still warming up.",
			VariesByStart: true, Optional: true},
		{Name: "jit_compiles", Unit: n, Kind: c, Cost: "jvm_jit_compiles_per_min", Label: "JVM JIT compiles",
			Family: "toll_jvm_jit_compiles_per_second", Help: "Methods the JVM's JIT compiled per second.", VariesByStart: true, Optional: true},
		{Name: "jit_cpu", Unit: s, Kind: c, Cost: "jvm_jit_cpu_ms_per_s", Label: "JVM JIT compilers' CPU",
			Family: "toll_jvm_jit_cpu_ratio", Help: "CPU the JVM's JIT compiler threads used, in cores (CPU seconds per second of load).",
			VariesByStart: true, Optional: true, Own: true},
		{Name: "init_s", Unit: s, Kind: start, Cost: "jvm_init_ms", Label: "JVM init",
			Family: "toll_jvm_init_seconds", Help: "JVM start-up time until the application's main."},
	}
}

// Find opens the hsperfdata file of the first JVM among pids: where Path
// finds it, else in the process's own /tmp through procMount/PID/root (a
// JVM in another container of a pod that shares one process namespace,
// so that the file's name is the pid seen here).
func (Runtime) Find(procMount string, pids []int) (runtime.Process, error) {
	for _, pid := range pids {
		path, err := PathIn(procMount, pid)
		if err != nil {
			continue
		}
		r, err := Open(path)
		if err != nil {
			continue
		}
		p := &Process{r: r, pid: pid}
		p.compilers, _ = NewCompilerThreads(procMount, pid)
		return p, nil
	}
	return nil, fmt.Errorf("jvm: no hsperfdata among %d processes: %w", len(pids), runtime.ErrNotFound)
}

// PathIn returns the hsperfdata file of the JVM with pid: where Path
// finds it, else in the process's own /tmp through procMount/PID/root.
func PathIn(procMount string, pid int) (string, error) {
	if p, err := Path(pid); err == nil {
		return p, nil
	}
	m, _ := filepath.Glob(filepath.Join(procMount, fmt.Sprint(pid), "root/tmp/hsperfdata_*", fmt.Sprint(pid)))
	if len(m) == 0 {
		return "", fmt.Errorf("jvm: no hsperfdata file for pid %d: %w", pid, os.ErrNotExist)
	}
	return m[0], nil
}

// Process is a JVM open for reading: its hsperfdata mapped, and its JIT
// compiler threads, where /proc lists them.
type Process struct {
	r         *Reader
	pid       int
	compilers *CompilerThreads
	// setup is what the JVM chose as it began (Setup), read once its
	// counters name a collector; nil before.
	setup map[string]string
}

var _ runtime.Process = (*Process)(nil)

// Pid is the JVM's process id.
func (p *Process) Pid() int { return p.pid }

// Reader is the JVM's hsperfdata, for what only a JVM has (NMTEnabled).
func (p *Process) Reader() *Reader { return p.r }

// Read returns the JVM's counters by metric name (Values), and jit_cpu,
// its compiler threads' CPU seconds, where they could be read.
func (p *Process) Read() (map[string]float64, error) {
	c, err := p.r.Counters()
	if err != nil {
		return nil, err
	}
	v := Values(c)
	if p.setup == nil && len(c.Collectors) > 0 {
		// A JVM's collectors are named once, as it begins.
		names := make([]string, len(c.Collectors))
		for i, col := range c.Collectors {
			names[i] = col.Name
		}
		p.setup = map[string]string{"gc": GCName(names)}
	}
	if p.compilers != nil {
		if d, err := p.compilers.CPU(); err == nil && d > 0 {
			v["jit_cpu"] = d.Seconds()
		}
	}
	return v, nil
}

// Setup returns the garbage collector the JVM runs ("gc": "Serial";
// GCName), as the first Read that found its collectors named it, or nil
// before. HotSpot picks its collector by the CPUs and memory it sees as
// it begins, unless its command names one: one JVM begun on one CPU runs
// Serial, the same begun on two runs G1.
func (p *Process) Setup() map[string]string { return p.setup }

// GCName names the collector a JVM runs by its collectors' names
// (sun.gc.collector.N.name, which differ between JDK versions: "Copy" and
// "MSC" or "Serial young collection pauses" for Serial): "Serial",
// "Parallel", "G1", "Z" or "Shenandoah", or those names joined by "+" for
// one toll does not know; "" for none (Epsilon publishes none).
func GCName(collectors []string) string {
	if len(collectors) == 0 {
		return ""
	}
	all := strings.Join(collectors, "+")
	for _, k := range []struct{ in, name string }{
		{"G1 ", "G1"}, {"Parallel ", "Parallel"}, {"PSScavenge", "Parallel"}, {"PSParallelCompact", "Parallel"},
		{"Shenandoah", "Shenandoah"}, {"ZGC", "Z"}, {"Z ", "Z"},
		{"Serial ", "Serial"}, {"MSC", "Serial"}, {"Copy", "Serial"}, {"copy", "Serial"},
	} {
		if strings.Contains(all, k.in) {
			return k.name
		}
	}
	return all
}

// Close unmaps the JVM's hsperfdata.
func (p *Process) Close() error { return p.r.Close() }

// Values returns c by the names of Runtime's metrics, the same names the
// trial record's typed JVM readings had (record.JVMSample): sizes in
// bytes, times in seconds, init_s only where the JVM has initialised.
func Values(c Counters) map[string]float64 {
	v := map[string]float64{
		"heap_used": float64(c.HeapUsed), "heap_committed": float64(c.HeapCommitted),
		"metaspace_used": float64(c.MetaspaceUsed), "metaspace_committed": float64(c.MetaspaceCommitted),
		"class_space_used": float64(c.ClassSpaceUsed),
		"classes_loaded":   float64(c.ClassesLoaded), "classes_unloaded": float64(c.ClassesUnloaded),
		"gc_count": float64(c.GCCount), "gc_time": c.GCTime.Seconds(),
		"threads": float64(c.Threads), "peak_threads": float64(c.PeakThreads),
		"jit_compiles": float64(c.JITCompiles), "jit_time": c.JITTime.Seconds(),
	}
	if !c.VMStart.IsZero() && c.VMInitDone.After(c.VMStart) {
		v["init_s"] = c.VMInitDone.Sub(c.VMStart).Seconds()
	}
	return v
}
