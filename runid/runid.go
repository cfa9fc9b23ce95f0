// Package runid names a run of toll: the pid of the toll process and the
// time it started, so that a later process reusing the pid is never taken
// for the run. Everything a run leaves on the machine carries its ID: every
// process it starts has TOLL_RUN=<ID> in its environment, and its cgroup
// tree is named <scenario>-<ID>. Whoever finds such a label can tell whether
// the run is still alive.
package runid

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// EnvVar is the environment variable that labels a process with the run
// that started it.
const EnvVar = "TOLL_RUN"

// procDir is where the process table is read.
const procDir = "/proc"

// ID names one run of toll.
type ID struct {
	// Pid is toll's process id.
	Pid int
	// Start is when toll started, in clock ticks after boot (field 22 of
	// /proc/PID/stat).
	Start uint64
}

// String returns "<pid>@<start>", the form of labels and tree names. It
// never ends in "-<digits>", which older tolls read as a bare pid.
func (id ID) String() string { return fmt.Sprintf("%d@%d", id.Pid, id.Start) }

// Env returns the environment entry that labels a process with id.
func (id ID) Env() string { return EnvVar + "=" + id.String() }

// Label returns env ("KEY=value" entries) with id's label in place of any
// label it had (a toll run by a service of another run inherits one).
func Label(env []string, id ID) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(e string) bool { return strings.HasPrefix(e, EnvVar+"=") })
	return append(env, id.Env())
}

// Parse reads an ID from its String form.
func Parse(s string) (ID, error) {
	p, st, ok := strings.Cut(s, "@")
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(st, 10, 64)
	if !ok || err1 != nil || err2 != nil || pid <= 0 {
		return ID{}, fmt.Errorf("runid: %q is not <pid>@<start>", s)
	}
	return ID{Pid: pid, Start: start}, nil
}

// Self returns the ID of the calling process.
func Self() (ID, error) { return Of(os.Getpid()) }

// Of returns the ID that process pid has as a run.
func Of(pid int) (ID, error) {
	st, err := readStat(pid)
	if err != nil {
		return ID{}, fmt.Errorf("runid: %w", err)
	}
	return ID{Pid: pid, Start: st.start}, nil
}

// Alive reports whether the run is still going: its process exists, is not
// a zombie, and started when the ID says (a reused pid is not the run).
func (id ID) Alive() bool {
	st, err := readStat(id.Pid)
	return err == nil && st.start == id.Start && st.state != 'Z' && st.state != 'X'
}

// stat is what this package reads of /proc/PID/stat.
type stat struct {
	state byte
	start uint64
}

// readStat reads the state and start time of process pid.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile(procDir + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
}

// parseStat parses a /proc/PID/stat line. The command name, in parentheses,
// may hold spaces and parentheses; the fields after the last ')' do not.
func parseStat(b []byte) (stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, errors.New("malformed stat: no ')'")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); the start time is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, errors.New("malformed stat: too few fields")
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("malformed stat: start time: %w", err)
	}
	return stat{state: f[0][0], start: start}, nil
}

// FromEnviron returns the run label in the environment of process pid, as
// /proc/PID/environ has it (the environment the process was started with).
// ok is false when the process has no label. Reading another user's
// process needs root.
func FromEnviron(pid int) (id ID, ok bool, err error) {
	b, err := os.ReadFile(procDir + "/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ID{}, false, err
	}
	return fromEnviron(b)
}

// fromEnviron finds the label in a NUL-separated environment block.
func fromEnviron(b []byte) (ID, bool, error) {
	prefix := []byte(EnvVar + "=")
	for len(b) > 0 {
		var kv []byte
		kv, b, _ = bytes.Cut(b, []byte{0})
		if v, found := bytes.CutPrefix(kv, prefix); found {
			id, err := Parse(string(v))
			return id, err == nil, err
		}
	}
	return ID{}, false, nil
}

// TreeName returns the name of the cgroup tree of a run of scenario.
func TreeName(scenario string, id ID) string { return scenario + "-" + id.String() }

// TreeOwner says which run a cgroup tree named by TreeName belongs to.
// Trees named by older tolls, "<scenario>-<pid>", give an ID with Start 0
// and legacy set: only their pid is known. ok is false for a name neither
// form.
func TreeOwner(name string) (id ID, legacy, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return ID{}, false, false
	}
	tail := name[i+1:]
	if strings.Contains(tail, "@") {
		id, err := Parse(tail)
		return id, false, err == nil
	}
	pid, err := strconv.Atoi(tail)
	if err != nil || pid <= 0 {
		return ID{}, false, false
	}
	return ID{Pid: pid}, true, true
}

// TreeInUse says whether the cgroup tree name belongs to a run that is
// still going. A legacy tree is in use while its pid exists; a name toll
// did not make is always in use (left alone).
func TreeInUse(name string) bool {
	id, legacy, ok := TreeOwner(name)
	switch {
	case !ok:
		return true
	case legacy:
		_, err := os.Stat(procDir + "/" + strconv.Itoa(id.Pid))
		return err == nil
	}
	return id.Alive()
}
