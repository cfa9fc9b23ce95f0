// Package cli is toll's command line: its commands, flags, exit codes and
// signal handling. cmd/toll is a wrapper around Main, and the end-to-end
// tests under e2e/ run Main as toll.
//
// toll measures what an agent costs the application it rides on: it runs a
// baseline and each variant of a set of services under identical load and
// reports every cost with a 95% confidence interval and a verdict.
//
// Usage:
//
//	toll run FILE [--out DIR]     run a scenario and report
//	toll report DIR               render the reports of a results directory again
//	toll app provider|consumer    the built-in reference services
//	toll cleanup                  remove what killed runs left (processes, cgroups)
//	toll version
//
// Exit codes: 0 success; 1 failure (toll could not do its job); 2 bad usage
// or scenario; 3 invalid run (toll did its job, but some variant has no
// sound trial: every one failed or was flagged); 4 a --fail-on gate failed;
// 130 interrupted, 5 gates not judged. When several apply, the first of
// 130, 1, 3, 5, 4 wins: a gate is only judged on a run that finished whole
// and is valid.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes. When several apply, ExitInterrupted wins over ExitFailure,
// which wins over ExitInvalid, which wins over ExitGate: a failed gate
// means something only when the measurement behind it is complete and
// valid.
const (
	// ExitOK means the run was carried out and its measurement is valid.
	ExitOK = 0
	// ExitFailure means toll could not do its job (a service did not start or
	// exited, a report could not be written).
	ExitFailure = 1
	// ExitUsage means bad usage or a bad scenario.
	ExitUsage = 2
	// ExitInvalid means toll did its job, but the measurement is not valid:
	// some variant, at some load step, has no sound trial, or in a precision
	// run no interval for a primary cost (analyze decides; summary.json's
	// "invalid" says why).
	ExitInvalid = 3
	// ExitGate means a --fail-on gate failed: some variant's change (against the
	// baseline in toll run, between runs in toll compare) lies, with its
	// whole 95% interval, beyond the threshold.
	ExitGate = 4
	// ExitUnjudged means --fail-on gates were given but could not be judged:
	// a run behind them is partial (interrupted, killed, stopped by an
	// error, trials missing or unreadable), so a pass would mean nothing.
	ExitUnjudged = 5
	// ExitNotAlike means toll compare refused two runs that did not run
	// alike: on machines of another CPU model, core count, kernel or
	// cgroup version, or with services run by other commands or images
	// (--allow-different-machines, --allow-different-services compare
	// them anyway).
	ExitNotAlike = 6
	// ExitInterrupted means toll was interrupted by SIGINT or SIGTERM.
	ExitInterrupted = 130
)

// exitCodesHelp documents the exit codes, for the commands' help.
const exitCodesHelp = `Exit codes:
  0    success: the run was carried out and its measurement is valid
  1    failure: toll could not do its job (a service did not start or exited,
       a report could not be written)
  2    bad usage or scenario
  3    invalid run: toll did its job, but the measurement is not valid: every
       trial of some variant (at some load step) failed (no request succeeded)
       or was flagged as not measuring what was planned (errors, a missed
       rate, unsent requests, a short window, no telemetry), or a precision
       run's budget ended it before a variant's primary cost had an
       interval; summary.json's "invalid" and the report's last line say why
  4    gate failed: with --fail-on, some variant's change lies, with its whole
       95% interval, beyond the threshold (against the baseline of the same
       run in toll run and toll report; between the two runs in toll compare)
  5    gates not judged: --fail-on was given, but a run behind it is partial
       (interrupted, killed, stopped by an error, trials missing or
       unreadable): the gates are not judged rather than passed
  6    runs not alike: toll compare's two runs ran on machines of another CPU
       model, core count, kernel or cgroup version, or ran their services by
       other commands or images (--allow-different-machines and
       --allow-different-services compare them anyway, and say so)
  130  interrupted (the trials finished are kept and reported)
When several apply, the first of 130, 1, 3, 5, 4 is the exit code: a gate
is judged only on a run that finished whole and is valid.`

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

// Main runs toll with os.Args and returns its exit code (see the Exit
// constants). SIGINT and SIGTERM are toll's to handle while it runs.
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopNow := make(chan struct{})
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go handleInterrupts(sigs, cancel, stopNow)

	root := newRootCmd(stopNow)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
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
	return ExitUsage // cobra's own errors: unknown command or flag
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
		Version:       tollVersion(),
	}
	root.SetVersionTemplate(versionLine() + "\n")
	root.AddCommand(newRunCmd(stopNow), newReportCmd(), newCompareCmd(), newLoadCmd(), newVersionCmd(), newCheckCmd(), newAppCmd(), newCleanupCmd(), newExecCmd(), newSinkCmd(), newLoadWorkerCmd(), newK8sCmd(), newHistoryCmd(), newBisectCmd(stopNow), newCostCmd())
	return root
}
