package launch

import (
	"errors"
	"fmt"
	"strings"
)

// StartError reports a service that did not become ready.
type StartError struct {
	// Name is the service's name.
	Name string
	// Err says why: the exit status, a readiness timeout, a cancellation.
	Err error
	// Log holds the last lines the service wrote to its log.
	Log []string
}

// Error returns the reason followed by the end of the log, one line each.
func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "start %s: %v", e.Name, e.Err)
	if len(e.Log) == 0 {
		b.WriteString("; log is empty")
		return b.String()
	}
	fmt.Fprintf(&b, "; last %d log lines:", len(e.Log))
	for _, l := range e.Log {
		b.WriteString("\n\t")
		b.WriteString(l)
	}
	return b.String()
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
}

// Error describes the exit.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("service %s exited unexpectedly: exit status 0", e.Name)
	}
	return fmt.Sprintf("service %s exited unexpectedly: %v", e.Name, e.Err)
}

// Unwrap returns the wait error.
func (e *ExitError) Unwrap() error { return e.Err }

// exitedBeforeReady describes a process that exited before it was ready,
// given what waiting for it returned.
func exitedBeforeReady(waitErr error) error {
	if waitErr == nil {
		return errors.New("exited before ready: exit status 0")
	}
	return fmt.Errorf("exited before ready: %w", waitErr)
}
