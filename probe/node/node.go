package node

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tollperf/toll/probe/runtime"
)

// staleAfter is how long a stats file may go unwritten and still be read:
// many times the script's period, so that a busy process's late timer is
// not taken for a dead one.
const staleAfter = 5 * time.Second

// Runtime is Node.js as a runtime toll reads (package runtime): the
// figures its preloaded script tollstats.cjs publishes.
type Runtime struct{}

var _ runtime.Runtime = Runtime{}

// Name is "node".
func (Runtime) Name() string { return "node" }

// Metrics describes Node's figures.
func (Runtime) Metrics() []runtime.Metric {
	const b, s, n = runtime.Bytes, runtime.Seconds, runtime.Count
	const g, c = runtime.Gauge, runtime.Counter
	return []runtime.Metric{
		{Name: "heap_used", Unit: b, Kind: g, Cost: "node_heap_used_mib", Label: "Node heap used",
			Family: "toll_node_heap_used_bytes", Help: "V8 heap used by Node.js (process.memoryUsage heapUsed).", VariesByStart: true},
		{Name: "heap_total", Unit: b, Kind: g, Cost: "node_heap_total_mib", Label: "Node heap total",
			Family: "toll_node_heap_total_bytes", Help: "V8 heap allocated by Node.js (process.memoryUsage heapTotal).", VariesByStart: true},
		{Name: "external", Unit: b, Kind: g, Cost: "node_external_mib", Label: "Node external memory",
			Family: "toll_node_external_bytes", Help: "Memory of C++ objects bound to JavaScript objects, buffers among them (process.memoryUsage external).", VariesByStart: true},
		{Name: "gc_time", Unit: s, Kind: c, Cost: "node_gc_ms_per_s", Label: "Node GC time",
			Family: "toll_node_gc_time_ratio", Help: "Share of wall-clock time Node.js spent in garbage collection.", VariesByStart: true},
		{Name: "gc_count", Unit: n, Kind: c, Cost: "node_gcs_per_min", Label: "Node GCs",
			Family: "toll_node_gcs_per_second", Help: "Node.js garbage collections per second.", VariesByStart: true},
		{Name: "loop_busy", Unit: s, Kind: c, Cost: "node_event_loop_busy_ms_per_s", Label: "Node event loop busy",
			Family: "toll_node_event_loop_busy_ratio", Help: "Share of wall-clock time the Node.js event loop was busy (performance.eventLoopUtilization)."},
	}
}

// Find returns the first process among pids whose stats file is fresh:
// in this machine's /tmp, else in the process's own through
// procMount/PID/root.
func (Runtime) Find(procMount string, pids []int) (runtime.Process, error) {
	for _, pid := range pids {
		for _, glob := range []string{
			filepath.Join("/tmp", "toll-node-*", strconv.Itoa(pid)),
			filepath.Join(procMount, strconv.Itoa(pid), "root/tmp/toll-node-*", strconv.Itoa(pid)),
		} {
			m, _ := filepath.Glob(glob)
			for _, path := range m {
				p := &Process{path: path, pid: pid}
				if _, err := p.Read(); err == nil {
					return p, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("node: no fresh stats file (tollstats.cjs) among %d processes: %w", len(pids), runtime.ErrNotFound)
}

// Process is a Node.js process whose stats file toll reads.
type Process struct {
	path string
	pid  int
}

var _ runtime.Process = (*Process)(nil)

// Pid is the process's id.
func (p *Process) Pid() int { return p.pid }

// Read reads the process's stats file: its figures by name, sizes in
// bytes, times in seconds.
func (p *Process) Read() (map[string]float64, error) {
	f, err := os.Open(p.path)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	if age := time.Since(fi.ModTime()); age > staleAfter {
		return nil, fmt.Errorf("node: %s not written for %v: the process no longer publishes its figures", p.path, age.Round(time.Second))
	}
	v, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("node: %s: %w", p.path, err)
	}
	return v, nil
}

// Setup is nil: Node.js's stats file publishes nothing it chose once.
func (p *Process) Setup() map[string]string { return nil }

// Close releases nothing: each Read opens the file anew, since the
// script replaces it.
func (p *Process) Close() error { return nil }

// maxLine bounds what Parse reads: the script writes about 200 bytes.
const maxLine = 4 << 10

// Parse reads one line of tollstats.cjs: a JSON object of numbers.
func Parse(r io.Reader) (map[string]float64, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxLine))
	if err != nil {
		return nil, err
	}
	var v map[string]float64
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}
