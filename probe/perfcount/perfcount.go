// Package perfcount counts CPU events (instructions and cycles) for every
// task in a cgroup with perf_event_open, so toll can report instructions
// and cycles per request: a cost that, unlike CPU time, does not move when
// the machine runs slower.
//
// Many virtual machines expose no hardware counters. Available says so once,
// with the reason, and toll reports the figures as unavailable.
package perfcount

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Event is one countable event.
type Event struct {
	Name   string
	Type   uint32
	Config uint64
}

// The events toll reports.
var (
	Instructions = Event{"instructions", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS}
	Cycles       = Event{"cycles", unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES}
	// TaskClock is a software event every kernel has; tests use it to
	// check the plumbing on machines without hardware counters.
	TaskClock = Event{"task-clock", unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK}
)

// Count is one event's count, summed over CPUs and scaled for the time the
// kernel multiplexed it out: value × enabled / running.
type Count struct {
	Event            Event
	Value            uint64
	Enabled, Running time.Duration
}

// Available says whether this kernel lets toll count hardware events, and
// if not, why. It opens an instructions counter on the calling thread.
func Available() error {
	fd, err := open(Instructions, 0, -1, 0)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV):
		return fmt.Errorf("the CPU or hypervisor exposes no hardware counters (perf_event_open instructions: %w)", err)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		p, _ := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
		return fmt.Errorf("perf_event_paranoid=%s forbids counting (run as root, or lower it): %w", strings.TrimSpace(string(p)), err)
	}
	return fmt.Errorf("perf_event_open instructions: %w", err)
}

// open opens one counter. pid is a pid, 0 for the caller, or a cgroup
// directory's fd with unix.PERF_FLAG_PID_CGROUP in flags.
func open(ev Event, pid, cpu int, flags int) (int, error) {
	attr := unix.PerfEventAttr{
		Type:        ev.Type,
		Config:      ev.Config,
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
		Bits:        unix.PerfBitExcludeHv,
	}
	return unix.PerfEventOpen(&attr, pid, cpu, -1, flags|unix.PERF_FLAG_FD_CLOEXEC)
}

// Group counts events for the tasks of one cgroup on a set of CPUs.
type Group struct {
	events []Event
	fds    [][]int // per event, per CPU
	buf    [24]byte
}

// OpenCgroup counts events for every task in the perf_event cgroup at dir
// (on cgroup v2, the cgroup's own directory; on v1, its directory in the
// perf_event hierarchy), on each of cpus. A cgroup counter only counts on
// the CPU it is opened for, so cpus must cover every CPU the cgroup's tasks
// run on.
func OpenCgroup(dir string, cpus []int, events ...Event) (*Group, error) {
	cg, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("perfcount: open cgroup %s: %w", dir, err)
	}
	defer unix.Close(cg)
	g := &Group{events: events}
	for _, ev := range events {
		var fds []int
		for _, cpu := range cpus {
			fd, err := open(ev, cg, cpu, unix.PERF_FLAG_PID_CGROUP)
			if err != nil {
				g.fds = append(g.fds, fds)
				g.Close()
				return nil, fmt.Errorf("perfcount: count %s for %s on CPU %d: %w", ev.Name, dir, cpu, err)
			}
			fds = append(fds, fd)
		}
		g.fds = append(g.fds, fds)
	}
	return g, nil
}

// Read returns each event's count so far.
func (g *Group) Read() ([]Count, error) {
	out := make([]Count, len(g.events))
	for i, ev := range g.events {
		out[i].Event = ev
		for _, fd := range g.fds[i] {
			n, err := unix.Read(fd, g.buf[:])
			if err != nil {
				return nil, fmt.Errorf("perfcount: read %s: %w", ev.Name, err)
			}
			c, err := parseRead(g.buf[:n])
			if err != nil {
				return nil, fmt.Errorf("perfcount: read %s: %w", ev.Name, err)
			}
			out[i].Value += c.Value
			out[i].Enabled += c.Enabled
			out[i].Running += c.Running
		}
	}
	return out, nil
}

// parseRead decodes a read of a counter opened with TOTAL_TIME_ENABLED and
// TOTAL_TIME_RUNNING: value, enabled ns, running ns (native byte order),
// scaling the value when the counter was multiplexed.
func parseRead(b []byte) (Count, error) {
	if len(b) != 24 {
		return Count{}, fmt.Errorf("read %d bytes, want 24", len(b))
	}
	v := binary.NativeEndian.Uint64(b[0:])
	en := binary.NativeEndian.Uint64(b[8:])
	run := binary.NativeEndian.Uint64(b[16:])
	if run > 0 && run < en {
		v = uint64(float64(v) * float64(en) / float64(run))
	}
	return Count{Value: v, Enabled: time.Duration(en), Running: time.Duration(run)}, nil
}

// Close closes every counter.
func (g *Group) Close() error {
	var errs []error
	for _, fds := range g.fds {
		for _, fd := range fds {
			if err := unix.Close(fd); err != nil {
				errs = append(errs, err)
			}
		}
	}
	g.fds = nil
	return errors.Join(errs...)
}
