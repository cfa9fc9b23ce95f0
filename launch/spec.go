package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"syscall"
	"time"
)

// DefaultReadyTimeout is how long Start waits for readiness when
// Readiness.Timeout is zero.
const DefaultReadyTimeout = 30 * time.Second

// Readiness says when a started service is ready to take load. When more
// than one check is set, all must succeed. When none is set, the service is
// ready as soon as it has started.
type Readiness struct {
	// HTTP is a URL that must answer a GET with a 2xx or 3xx status.
	// Redirects are not followed. A URL that answers the same client
	// error (a 404, a 405: see definiteRefusal) for 5 s fails the wait
	// before Timeout.
	HTTP string
	// TCP is a host:port that must accept a connection.
	TCP string
	// Log, when set, must match a line the service writes to its log
	// after it starts: the readiness of a daemon that listens on no port
	// (an eBPF agent that prints once its probes are attached).
	Log *regexp.Regexp
	// Command, when set, is an argv that must exit 0: the readiness of a
	// daemon whose own tool says when it is up. Each run is bounded by a
	// second and killed after it. CommandDir and CommandEnv are its
	// working directory and environment (toll's when empty or nil).
	Command    []string
	CommandDir string
	CommandEnv []string
	// Timeout bounds the wait; zero means DefaultReadyTimeout.
	Timeout time.Duration
}

// configured reports whether any readiness check is set.
func (r Readiness) configured() bool {
	return r.HTTP != "" || r.TCP != "" || r.Log != nil || len(r.Command) > 0
}

// timeout returns the effective timeout.
func (r Readiness) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultReadyTimeout
}

// Spec describes one service to start.
type Spec struct {
	// Name identifies the service in errors.
	Name string
	// Argv is the program and its arguments. A program name without a slash
	// is looked up in toll's own PATH.
	Argv []string
	// Env is the complete environment of the service, as "KEY=value"
	// entries. A nil Env inherits toll's environment; an empty, non-nil one
	// gives an empty environment.
	Env []string
	// Dir is the working directory; empty means toll's.
	Dir string
	// LogPath is the file that receives the service's stdout and stderr. It
	// is created if needed and appended to.
	LogPath string
	// OpenLog, when set, opens the log, as os.OpenFile does LogPath, which
	// then only names it: a results directory held open opens its logs
	// from the directory it holds, wherever LogPath leads since
	// (record.Dir.LogOpener).
	OpenLog func(flag int, perm os.FileMode) (*os.File, error)
	// LogLimit is the size the log may reach while the service runs,
	// checked every second: past it, all but the log's last 64 KiB is
	// dropped, behind a line that says so. Zero means DefaultLogLimit;
	// a negative limit, none.
	LogLimit int64
	// Ready says when the service is ready.
	Ready Readiness
	// StopSignal is the signal Stop sends the group first; zero means
	// SIGTERM.
	StopSignal syscall.Signal
	// DeathSignal is the signal the process gets when toll dies (its
	// parent-death signal); zero means SIGKILL. A supervisor that kills
	// what the service started before it exits (toll's _exec) asks for a
	// catchable one.
	DeathSignal syscall.Signal
	// Members are cgroup.procs files whose processes (and those of the
	// cgroups below) are the service's besides the tree of the process
	// toll starts: a container's, started by its engine outside that tree.
	// The readiness check accepts a listener held by one of them.
	Members []string
	// Forwarded are ports of this machine that a container engine holds
	// and forwards to the service (its published ports): the readiness
	// check does not ask who listens there.
	Forwarded []int
	// Release removes what the service leaves once its processes are gone
	// (a container's record); Stop calls it after the process group is
	// gone, whether the service stopped, was killed or had exited. nil
	// means nothing to remove.
	Release func(context.Context) error
}

// opener opens a service's log as os.OpenFile does, with flag.
type opener func(flag int) (*os.File, error)

// logOpener returns how the service's log is opened: by OpenLog when set,
// else by LogPath.
func (s *Spec) logOpener() opener {
	if open := s.OpenLog; open != nil {
		return func(flag int) (*os.File, error) { return open(flag, 0o644) }
	}
	path := s.LogPath
	return func(flag int) (*os.File, error) { return os.OpenFile(path, flag, 0o644) }
}

// validate checks the fields that Start cannot do without.
func (s Spec) validate() error {
	switch {
	case len(s.Argv) == 0 || s.Argv[0] == "":
		return errors.New("no program given")
	case s.LogPath == "":
		return errors.New("no log path given")
	}
	if s.Ready.HTTP != "" {
		u, err := url.Parse(s.Ready.HTTP)
		if err != nil {
			return fmt.Errorf("readiness URL: %w", err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("readiness URL %q: want http://host:port/path", s.Ready.HTTP)
		}
	}
	if s.Ready.TCP != "" {
		if _, _, err := net.SplitHostPort(s.Ready.TCP); err != nil {
			return fmt.Errorf("readiness address: %w", err)
		}
	}
	return nil
}
