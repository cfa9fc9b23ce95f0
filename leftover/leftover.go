// Package leftover removes what runs of toll that are gone left on the
// machine. A run that ends normally removes everything it made; one whose
// toll was killed outright (SIGKILL, the OOM killer, a lost machine
// container) cannot, and its services' supervisors kill what they can as
// toll dies. Whatever is still left carries the run's label: processes have
// TOLL_RUN=<pid>@<start> in their environment, cgroup trees are named
// <scenario>-<pid>@<start> (package runid). A label is stale when the toll it
// names is gone (a process with that pid and start time no longer runs).
//
// Each kind of leftover has a Cleaner; `toll cleanup` and the start of every
// `toll run` run them all. A new kind (containers, say) is a new Cleaner.
package leftover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/container"
	"github.com/tollperf/toll/runid"
)

const (
	// killTimeout bounds how long killing labelled processes goes on.
	killTimeout = 5 * time.Second
	// killPoll is how long to wait between passes over /proc.
	killPoll = 20 * time.Millisecond
)

// Removed is one thing a cleaner removed.
type Removed struct {
	// Kind is what it was: "process", "container", "cgroup" or "sink
	// counts file".
	Kind string
	// What names it, e.g. "1234 (sleep) of run 999@8812" or a cgroup
	// tree's name.
	What string
}

// String describes r for people, e.g. "process 1234 (sleep) of run 999@8812".
func (r Removed) String() string { return r.Kind + " " + r.What }

// A Cleaner removes one kind of leftover of runs that are gone.
type Cleaner interface {
	// Kind names what it removes, in the plural ("processes").
	Kind() string
	// Clean removes the leftovers of runs that are gone and returns them.
	// It returns what it removed even with an error.
	Clean(ctx context.Context) ([]Removed, error)
}

// Cleaners returns every cleaner, in the order they run: processes first,
// then containers (whose processes are labelled too, so they have stopped),
// so that the cgroups they were in are empty when they are removed.
// The sinks' counts files go last: a file a sink of a dead run still has
// mapped is gone from /tmp once that sink is killed.
func Cleaners() []Cleaner {
	return []Cleaner{Processes{}, Containers{}, Cgroups{}, SinkCounts{Dir: os.TempDir()}, Scratch{Dir: os.TempDir()}}
}

// Clean runs each cleaner in turn and returns everything removed, with their
// errors joined.
func Clean(ctx context.Context, cs []Cleaner) ([]Removed, error) {
	var all []Removed
	var errs []error
	for _, c := range cs {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		r, err := c.Clean(ctx)
		all = append(all, r...)
		if err != nil {
			errs = append(errs, fmt.Errorf("clean up %s: %w", c.Kind(), err))
		}
	}
	return all, errors.Join(errs...)
}

// Processes kills (SIGKILL) every process labelled with a run that is gone.
type Processes struct{}

// Kind returns "processes".
func (Processes) Kind() string { return "processes" }

// Clean kills the labelled processes of runs that are gone.
func (Processes) Clean(ctx context.Context) ([]Removed, error) {
	alive := map[runid.ID]bool{}
	return killLabelled(ctx, func(id runid.ID) bool {
		a, ok := alive[id]
		if !ok {
			a = id.Alive()
			alive[id] = a
		}
		return !a
	})
}

// KillRun kills (SIGKILL) every process labelled with run id: what is left
// of the calling run's services once they are stopped, should one have
// left both its process group and its cgroup.
func KillRun(ctx context.Context, id runid.ID) ([]Removed, error) {
	return killLabelled(ctx, func(l runid.ID) bool { return l == id })
}

// killLabelled SIGKILLs every process whose label match accepts, pass after
// pass over /proc (a process may fork while it is being killed), until a
// pass finds none or killTimeout passes. The calling process is spared.
func killLabelled(ctx context.Context, match func(runid.ID) bool) ([]Removed, error) {
	proc, err := procfs.NewDefaultFS()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var removed []Removed
	var killed []int
	deadline := time.Now().Add(killTimeout)
	for {
		procs, err := proc.AllProcs()
		if err != nil {
			return removed, err
		}
		found := 0
		for _, p := range procs {
			if p.PID == self {
				continue
			}
			// Unreadable environments are of processes that are gone,
			// zombies, kernel threads, or not ours to read.
			id, ok, err := runid.FromEnviron(p.PID)
			if err != nil || !ok || !match(id) {
				continue
			}
			if err := unix.Kill(p.PID, unix.SIGKILL); err != nil {
				continue // exited meanwhile
			}
			found++
			if !slices.Contains(killed, p.PID) {
				killed = append(killed, p.PID)
				name, _ := p.Comm()
				removed = append(removed, Removed{Kind: "process", What: fmt.Sprintf("%d (%s) of run %s", p.PID, name, id)})
			}
		}
		if found == 0 {
			return removed, nil
		}
		if time.Now().After(deadline) {
			return removed, fmt.Errorf("%d labelled process(es) still alive %v after SIGKILL", found, killTimeout)
		}
		select {
		case <-ctx.Done():
			return removed, ctx.Err()
		case <-time.After(killPoll):
		}
	}
}

// Cgroups removes the cgroup trees of runs that are gone: their processes
// are killed and their cgroups removed (cgroup.RemoveStale).
type Cgroups struct{}

// Kind returns "cgroups".
func (Cgroups) Kind() string { return "cgroups" }

// Clean removes the trees of runs that are gone. Where cgroups are not
// usable there is nothing to remove.
func (Cgroups) Clean(ctx context.Context) ([]Removed, error) {
	if _, err := cgroup.Detect(); err != nil {
		return nil, nil
	}
	names, err := cgroup.RemoveStale(runid.TreeInUse)
	var removed []Removed
	for _, n := range names {
		removed = append(removed, Removed{Kind: "cgroup", What: n})
	}
	return removed, err
}

// Containers removes the containers of runs that are gone, in every
// container engine installed (Podman, Docker; one without its daemon holds
// none): those labelled
// container.LabelRun with a run that no longer lives. The engine keeps a
// container whose CLI was killed with toll, stopped or not, until then.
type Containers struct{}

// Kind returns "containers".
func (Containers) Kind() string { return "containers" }

// Clean removes the labelled containers of runs that are gone. Where no
// engine is installed there is nothing to remove.
func (Containers) Clean(ctx context.Context) ([]Removed, error) {
	var removed []Removed
	var errs []error
	for _, e := range container.Installed() {
		cs, err := e.List(ctx, container.LabelRun)
		if container.IsNotRunning(err) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, c := range cs {
			id, err := runid.Parse(c.Labels[container.LabelRun])
			if err != nil || id.Alive() {
				continue // not a label toll wrote, or of a run that lives
			}
			if err := e.Remove(ctx, c.ID); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, Removed{Kind: "container", What: fmt.Sprintf("%s (%s, %s) of run %s", c.Name, e.Name, c.Image, id)})
		}
	}
	return removed, errors.Join(errs...)
}

// sinkCountsPrefix and sinkCountsSuffix frame the name of a sink's counts
// file: toll-sink-<run>-<random>.counts (toll-sink-<random>.counts from
// tolls before the run was in the name).
const (
	sinkCountsPrefix = "toll-sink-"
	sinkCountsSuffix = ".counts"
)

// SinkCountsPattern is the os.CreateTemp pattern of the counts file of a
// sink of run id, which names the run so that SinkCounts can tell whether
// it still lives.
func SinkCountsPattern(id runid.ID) string {
	return sinkCountsPrefix + id.String() + "-*" + sinkCountsSuffix
}

// sinkCountsOwner returns the run a counts file's name carries; labelled is
// false for the unlabelled names of older tolls, ok false for a name that
// is not a counts file's.
func sinkCountsOwner(name string) (id runid.ID, labelled, ok bool) {
	return owner(name, sinkCountsPrefix, sinkCountsSuffix)
}

// owner returns the run that name, prefix + run + "-" + random + suffix,
// carries; labelled is false for a name with no run in it, ok false for a
// name not framed by prefix and suffix.
func owner(name, prefix, suffix string) (id runid.ID, labelled, ok bool) {
	mid, found := strings.CutPrefix(name, prefix)
	if !found {
		return runid.ID{}, false, false
	}
	if mid, found = strings.CutSuffix(mid, suffix); !found || mid == "" {
		return runid.ID{}, false, false
	}
	i := strings.LastIndexByte(mid, '-')
	if i < 0 {
		return runid.ID{}, false, !strings.Contains(mid, "@")
	}
	id, err := runid.Parse(mid[:i])
	if err != nil {
		return runid.ID{}, false, false
	}
	return id, true, true
}

// SinkCounts removes the counts files (toll-sink-*.counts) that the sinks
// of runs that are gone left in Dir: a run removes its own as each sink
// stops, a killed one cannot. A file named with its run is removed when
// that run no longer lives; one from an older toll, whose name carries no
// run, when no process has it mapped (a sink and its toll both map it).
type SinkCounts struct {
	// Dir is where the files are, os.TempDir() for toll run's sinks.
	Dir string
}

// Kind returns "sink counts files".
func (SinkCounts) Kind() string { return "sink counts files" }

// Clean removes the counts files of runs that are gone.
func (c SinkCounts) Clean(ctx context.Context) ([]Removed, error) {
	var mapped map[string]bool // read once, for the first unlabelled file
	return removeDead(ctx, c.Dir, "sink counts file", os.Remove, func(e os.DirEntry, path string) (string, bool) {
		id, labelled, ok := sinkCountsOwner(e.Name())
		if !ok || !e.Type().IsRegular() {
			return "", false
		}
		if labelled {
			return path + " of run " + id.String(), !id.Alive()
		}
		if mapped == nil {
			mapped = mappedFiles()
		}
		return path, !mapped[path]
	})
}

// removeDead removes, with remove, each entry of dir that dead says a run
// that is gone left (and how to name it), each reported as of kind; an
// entry gone meanwhile is no error.
func removeDead(ctx context.Context, dir, kind string, remove func(string) error, dead func(e os.DirEntry, path string) (what string, ok bool)) ([]Removed, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var removed []Removed
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		path := filepath.Join(dir, e.Name())
		what, ok := dead(e, path)
		if !ok {
			continue
		}
		if err := remove(path); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, Removed{Kind: kind, What: what})
	}
	return removed, errors.Join(errs...)
}

// scratchPrefix begins the name of a run's scratch directory:
// toll-scratch-<run>-<random>.
const scratchPrefix = "toll-scratch-"

// ScratchPattern is the os.MkdirTemp pattern of run id's scratch directory,
// where the profiled processes and the profilers write what toll reads
// back and removes: it names the run, so that Scratch can tell whether the
// run still lives.
func ScratchPattern(id runid.ID) string {
	return scratchPrefix + id.String() + "-*"
}

// Scratch removes the scratch directories (toll-scratch-*) that runs that
// are gone left in Dir: a run removes its own at its end, a killed one
// cannot.
type Scratch struct {
	// Dir is where they are, os.TempDir() for toll run's.
	Dir string
}

// Kind returns "scratch directories".
func (Scratch) Kind() string { return "scratch directories" }

// Clean removes the scratch directories of runs that are gone.
func (c Scratch) Clean(ctx context.Context) ([]Removed, error) {
	return removeDead(ctx, c.Dir, "scratch directory", os.RemoveAll, func(e os.DirEntry, path string) (string, bool) {
		id, labelled, ok := owner(e.Name(), scratchPrefix, "")
		if !ok || !labelled || !e.IsDir() || id.Alive() {
			return "", false
		}
		return path + " of run " + id.String(), true
	})
}

// mappedFiles returns the paths of every file some process has mapped, as
// far as /proc/PID/maps can be read (another user's need root; their
// files in a sticky /tmp are not ours to remove either).
func mappedFiles() map[string]bool {
	files := map[string]bool{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/maps")
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			// address perms offset dev inode path; the path may hold spaces.
			f := strings.Fields(line)
			if len(f) < 6 {
				continue
			}
			files[strings.Join(f[5:], " ")] = true
		}
	}
	return files
}

// Describe summarises removed in one line for a note or a progress line,
// e.g. "2 processes (4242 (sleep) of run 999@8812, …), 1 cgroup
// (quickstart-999@8812)", naming at most a few of each kind.
func Describe(removed []Removed) string {
	const most = 3
	var kinds []string
	byKind := map[string][]string{}
	for _, r := range removed {
		if _, ok := byKind[r.Kind]; !ok {
			kinds = append(kinds, r.Kind)
		}
		byKind[r.Kind] = append(byKind[r.Kind], r.What)
	}
	var parts []string
	for _, k := range kinds {
		whats := byKind[k]
		noun := k
		if len(whats) != 1 {
			noun = plural(k)
		}
		shown := whats[:min(len(whats), most)]
		more := ""
		if len(whats) > most {
			more = ", …"
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s%s)", len(whats), noun, strings.Join(shown, ", "), more))
	}
	return strings.Join(parts, ", ")
}

// plural returns the plural of a kind.
func plural(kind string) string {
	if strings.HasSuffix(kind, "s") {
		return kind + "es"
	}
	if stem, ok := strings.CutSuffix(kind, "ry"); ok {
		return stem + "ries"
	}
	return kind + "s"
}
