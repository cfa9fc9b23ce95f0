// Command toll measures what an agent costs the application it rides on:
// it runs a baseline and each variant of a set of services under identical
// load and reports every cost with a 95% confidence interval and a verdict.
//
// Usage:
//
//	toll run FILE [--out DIR]     run a scenario and report
//	toll report DIR               render the reports of a results directory again
//	toll app provider|consumer    the built-in reference services
//	toll cleanup                  remove what killed runs left (processes, cgroups)
//	toll version
//
// Exit codes: 0 success, 1 failure, 2 bad usage or scenario, 130 interrupted.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode ends toll with a code and no message of its own: the message was
// printed already, by toll run again in a network namespace.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

func main() {
	os.Exit(realMain())
}

func realMain() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopNow := make(chan struct{})
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go handleInterrupts(sigs, cancel, stopNow)

	root := newRootCmd(stopNow)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code)
	}
	fmt.Fprintln(os.Stderr, "toll:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage // cobra's own errors: unknown command or flag
}

// handleInterrupts turns SIGINT and SIGTERM into the two steps of stopping:
// the first cancels the command's context, the second closes stopNow, and
// later ones change nothing, so that toll never exits before it has done
// what the second asks. For toll run (which says what it does,
// announceInterrupts) the first means stop gracefully: the current trial is
// cut short, services are stopped (SIGTERM, then SIGKILL after the grace
// period) and reports are written from the trials that finished; the
// second means kill the services at once and still write what was measured
// and exit 130. If toll itself is killed, the _exec supervisors kill the
// services.
func handleInterrupts(sigs <-chan os.Signal, cancel context.CancelFunc, stopNow chan<- struct{}) {
	<-sigs
	cancel()
	<-sigs
	close(stopNow)
	for range sigs {
	}
}

func newRootCmd(stopNow <-chan struct{}) *cobra.Command {
	root := &cobra.Command{
		Use:   "toll",
		Short: "Measure what an agent costs your application",
		Long: `toll runs the same services as a baseline and as each variant (an in-process
agent, an agent daemon, a sidecar, a runtime mode) under identical load, and
reports baseline / variant / Δ / Δ% for every cost, with a 95% confidence
interval and a verdict.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCmd(stopNow), newReportCmd(), newCompareCmd(), newLoadCmd(), newVersionCmd(), newAppCmd(), newCleanupCmd(), newExecCmd())
	return root
}
