package launch

import (
	"fmt"
	"strings"
)

// StartError reports a service that did not become ready.
type StartError struct {
	// Name is the service's name.
	Name string
	// Err says why: the exit status, a readiness timeout, a cancellation.
	Err error
	// Log holds the lines the service wrote to its log: its last, after
	// its first LogHead and a line saying what was left out between them.
	Log []string
	// LogHead is how many of Log's lines are the log's first; 0 when Log
	// is the log's end.
	LogHead int
}

// Error returns the reason followed by the log, one line each.
func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "start %s: %v", e.Name, e.Err)
	writeLog(&b, e.Log, e.LogHead)
	return b.String()
}

// writeLog ends an error message with a service's log, one line each (its
// first head lines, a line saying what was left out, and its last), or
// says the log is empty.
func writeLog(b *strings.Builder, log []string, head int) {
	if len(log) == 0 {
		b.WriteString("; log is empty")
		return
	}
	if head > 0 && head < len(log)-1 {
		fmt.Fprintf(b, "; first %d and last %d log lines:", head, len(log)-head-1)
	} else {
		fmt.Fprintf(b, "; last %d log lines:", len(log))
	}
	for _, l := range log {
		b.WriteString("\n\t")
		b.WriteString(l)
	}
}

// Unwrap returns the reason.
func (e *StartError) Unwrap() error { return e.Err }

// ExitError reports a service whose process exited without being asked to.
type ExitError struct {
	// Name is the service's name.
	Name string
	// Err is what waiting for the process returned: an *exec.ExitError,
	// or nil for a zero exit status.
	Err error
	// Log holds the lines the service wrote to its log, what it said
	// before it exited: its last, after its first LogHead and a line
	// saying what was left out between them.
	Log []string
	// LogHead is how many of Log's lines are the log's first; 0 when Log
	// is the log's end.
	LogHead int
}

// Error describes the exit, followed by the log, one line each.
func (e *ExitError) Error() string {
	var b strings.Builder
	if e.Err == nil {
		fmt.Fprintf(&b, "service %s exited unexpectedly: exit status 0", e.Name)
	} else {
		fmt.Fprintf(&b, "service %s exited unexpectedly: %v", e.Name, e.Err)
	}
	writeLog(&b, e.Log, e.LogHead)
	return b.String()
}

// Unwrap returns the wait error.
func (e *ExitError) Unwrap() error { return e.Err }

// exitedBeforeReady describes a process that exited before it was ready,
// given what waiting for it returned.
func exitedBeforeReady(waitErr error) error { return exited("before ready", waitErr) }

// exited describes a process that exited when it should not have, given
// what waiting for it returned.
func exited(when string, waitErr error) error {
	if waitErr == nil {
		return fmt.Errorf("exited %s: exit status 0", when)
	}
	return fmt.Errorf("exited %s: %w", when, waitErr)
}
