package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/leftover"
)

// newCleanupCmd returns `toll cleanup`, which removes what runs of toll that
// were killed left behind.
func newCleanupCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cleanup",
		Short: "Kill the processes and remove the containers, cgroups and files that killed runs of toll left behind",
		Long: `toll cleanup removes what runs of toll that are gone left on this machine:
processes labelled with such a run (TOLL_RUN=<pid>@<start> in their
environment) are killed with SIGKILL, containers labelled with such a run
(toll.run=<pid>@<start>, in Podman and in Docker, whichever is installed) are
removed, and the cgroup trees of such runs (toll/<scenario>-<pid>@<start>)
are removed, and so are the counts files of such runs' telemetry sinks
($TMPDIR/toll-sink-<pid>@<start>-*.counts). A run is gone when no process
with its pid and start time runs any more; runs still going are left alone.
Every toll run does the same when it starts. Reading other users' processes
and removing cgroups needs root.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			removed, err := leftover.Clean(cmd.Context(), leftover.Cleaners())
			w := cmd.OutOrStdout()
			for _, r := range removed {
				fmt.Fprintf(w, "removed %s\n", r)
			}
			if err != nil {
				return &exitError{ExitFailure, err}
			}
			if len(removed) == 0 {
				fmt.Fprintln(w, "nothing to clean up")
			}
			return nil
		},
	}
}
