package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/loadproc"
	"github.com/tollperf/toll/pin"
)

// newLoadWorkerCmd is the hidden command that sends load toll must not
// send from its own process (package loadproc): at idle priority
// (pin.Idle) on --cpus, it reads a loadproc.Spec on its standard input,
// runs it, and writes its progress and outcome on its standard output
// (loadproc.Serve), until the load ends or SIGTERM or SIGINT stops it.
func newLoadWorkerCmd() *cobra.Command {
	var cpus string
	cmd := &cobra.Command{
		Use:    "_load [--cpus LIST]",
		Short:  "Send the load read on standard input at idle priority (used by toll itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Threads the runtime starts later inherit both.
			if err := placeSelf(cpus, true); err != nil {
				return err
			}
			if err := loadproc.Serve(cmd.Context(), os.Stdin, os.Stdout); err != nil && cmd.Context().Err() == nil {
				return &exitError{ExitFailure, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cpus, "cpus", "", "CPU list to run on")
	return cmd
}

// placeSelf moves this process to cpus (a CPU list; empty leaves it where
// it is) and, with idle, under SCHED_IDLE: the placement of toll's helper
// processes (_exec, _load), which their children and later threads
// inherit.
func placeSelf(cpus string, idle bool) error {
	if cpus != "" {
		set, err := pin.Parse(cpus)
		if err != nil {
			return &exitError{ExitUsage, err}
		}
		if err := set.Process(os.Getpid()); err != nil {
			return &exitError{ExitFailure, err}
		}
	}
	if idle {
		if err := pin.Idle(os.Getpid()); err != nil {
			return &exitError{ExitFailure, err}
		}
	}
	return nil
}
