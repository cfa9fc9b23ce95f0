package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/supervise"
)

// newExecCmd is the hidden command toll starts every service through: it
// joins the service's cgroups and CPU set, so that the service is placed
// before its first instruction (no race with the children it starts) on
// cgroup v1 and v2 alike, then supervises it (package supervise): it starts
// the service as its child, labelled with toll's run (TOLL_RUN), passes
// signals on, reaps orphans, exits as the service exits, and kills
// everything the service started if toll dies. toll starts it with
// supervise.DeathSignal as its parent-death signal.
func newExecCmd() *cobra.Command {
	var procs, watch, cpus string
	var idle bool
	cmd := &cobra.Command{
		Use:    "_exec [--cgroup-procs F1,F2] [--watch-cgroup-procs F1,F2] [--cpus LIST] [--idle] -- COMMAND [ARGS...]",
		Short:  "Run and supervise COMMAND inside cgroups and a CPU set (used by toll itself)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Interrupts are the service's to handle: the supervisor
			// passes them on (supervise.Run catches them) instead of
			// stopping like toll run.
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			toll := os.Getppid()
			if toll == 1 {
				return &exitError{ExitFailure, fmt.Errorf("toll exited before %s started", args[0])}
			}
			run, err := runid.Of(toll)
			if err != nil {
				return &exitError{ExitFailure, fmt.Errorf("label %s with toll's run: %w", args[0], err)}
			}
			var procsFiles []string
			if procs != "" {
				procsFiles = strings.Split(procs, ",")
				if err := cgroup.Enter(procsFiles); err != nil {
					return &exitError{ExitFailure, fmt.Errorf("join cgroup: %w", err)}
				}
			}
			// Cgroups the supervisor does not join but whose processes
			// are the service's (a container's): killed with the rest
			// should toll die.
			watched := procsFiles
			if watch != "" {
				watched = append(slices.Clone(procsFiles), strings.Split(watch, ",")...)
			}
			// The service inherits the supervisor's CPUs and policy at
			// its start.
			if err := placeSelf(cpus, idle); err != nil {
				return err
			}
			ws, err := supervise.Run(supervise.Config{
				Argv: args, Env: runid.Label(os.Environ(), run), Parent: toll,
				DeathSignal: supervise.DeathSignal, CgroupProcs: watched, Log: os.Stderr,
			})
			if err != nil && (ws == 0 || !errors.Is(err, supervise.ErrParentGone)) {
				return &exitError{ExitFailure, err}
			}
			supervise.Exit(ws)
			return nil // not reached
		},
	}
	cmd.Flags().StringVar(&procs, "cgroup-procs", "", "cgroup.procs files to join, comma-separated")
	cmd.Flags().StringVar(&watch, "watch-cgroup-procs", "", "cgroup.procs files, comma-separated, whose processes are killed with the service's if toll dies, without joining them")
	cmd.Flags().StringVar(&cpus, "cpus", "", "CPU list to run on")
	cmd.Flags().BoolVar(&idle, "idle", false, "run at idle priority (SCHED_IDLE)")
	return cmd
}
