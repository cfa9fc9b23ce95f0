package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/pin"
)

// newExecCmd is the hidden shim toll starts services through: it joins the
// service's cgroups and CPU set and then replaces itself with the service,
// so the service is placed before its first instruction (no race with the
// children it starts) on cgroup v1 and v2 alike.
func newExecCmd() *cobra.Command {
	var procs, cpus string
	cmd := &cobra.Command{
		Use:    "_exec [--cgroup-procs F1,F2] [--cpus LIST] -- COMMAND [ARGS...]",
		Short:  "Run COMMAND inside cgroups and a CPU set (used by toll itself)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			runtime.LockOSThread()
			if procs != "" {
				if err := cgroup.Enter(strings.Split(procs, ",")); err != nil {
					return &exitError{exitFailure, fmt.Errorf("join cgroup: %w", err)}
				}
			}
			if cpus != "" {
				set, err := pin.Parse(cpus)
				if err != nil {
					return &exitError{exitUsage, err}
				}
				if err := set.Process(os.Getpid()); err != nil {
					return &exitError{exitFailure, err}
				}
			}
			// Linux keeps the parent-death signal per thread and only the
			// thread toll forked has it; the Go runtime may run this code on
			// another, so set it again on the thread that will exec (it is
			// locked above), then make sure toll did not die meanwhile.
			ppid := os.Getppid()
			if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
				return &exitError{exitFailure, fmt.Errorf("set parent-death signal: %w", err)}
			}
			if ppid == 1 {
				return &exitError{exitFailure, fmt.Errorf("toll exited before %s started", args[0])}
			}
			path, err := exec.LookPath(args[0])
			if err != nil {
				return &exitError{exitFailure, fmt.Errorf("start %s: %w", args[0], err)}
			}
			err = syscall.Exec(path, args, os.Environ())
			return &exitError{exitFailure, fmt.Errorf("exec %s: %w", path, err)}
		},
	}
	cmd.Flags().StringVar(&procs, "cgroup-procs", "", "cgroup.procs files to join, comma-separated")
	cmd.Flags().StringVar(&cpus, "cpus", "", "CPU list to run on")
	return cmd
}
