package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/sink"
)

// newSinkCmd is the hidden command toll run receives each variant's
// telemetry through: a sink in a process of its own, at idle priority
// (pin.Idle), counting into a file toll has mapped (sink.CountsFile). In
// toll's own process, decoding an agent's batch of spans held the Go
// runtime's only processor of the load generator's CPU for up to a
// millisecond, and its garbage the collector's, so requests due meanwhile
// left late; here the kernel preempts the sink whenever the generator
// wakes. It serves until SIGTERM or SIGINT (toll stops it after the
// services), then finishes the requests in flight.
func newSinkCmd() *cobra.Command {
	var addr, counts string
	cmd := &cobra.Command{
		Use:    "_sink --addr HOST:PORT --counts FILE",
		Short:  "Receive agents' telemetry at idle priority and count it into FILE (used by toll itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pin.Idle(os.Getpid()); err != nil {
				return &exitError{ExitFailure, err}
			}
			if os.Getenv("GOMEMLIMIT") == "" {
				debug.SetMemoryLimit(sink.ProcessMemoryLimit)
			}
			f, err := sink.OpenCountsFile(counts)
			if err != nil {
				return &exitError{ExitFailure, err}
			}
			defer f.Close()
			sk := sink.NewCounting(f)
			if err := sk.Start(addr); err != nil {
				return &exitError{ExitFailure, fmt.Errorf("sink: %w", err)}
			}
			<-cmd.Context().Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := sk.Close(ctx); err != nil {
				return &exitError{ExitFailure, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "address to listen on")
	cmd.Flags().StringVar(&counts, "counts", "", "counts file, made by toll (sink.CreateCountsFile)")
	cmd.MarkFlagRequired("addr")
	cmd.MarkFlagRequired("counts")
	return cmd
}
