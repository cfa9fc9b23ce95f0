package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/launch"
	"github.com/tollperf/toll/leftover"
	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/sink"
)

// counter is what has arrived at a telemetry sink so far: a variant's
// sinkProcess, or a sink.Sink in toll's process (tests).
type counter interface {
	Counts() sink.Counts
}

// sinkOf returns variant's sink as a counter, or nil (not a nil
// *sinkProcess in an interface) when it has none.
func (b *Backend) sinkOf(variant string) counter {
	if sp := b.sinks[variant]; sp != nil {
		return sp
	}
	return nil
}

// sinkProcess is a variant's telemetry sink run as toll's _sink, a
// process of its own at idle priority on toll's CPUs, which counts into a
// file mapped here too. A sink in toll's own process decoded agents'
// batches on the load generator's CPU in the Go runtime's only processor
// there and left garbage for its collector: requests due meanwhile left
// up to a millisecond late, which added to the latency measured for the
// variant whose agent exported. The kernel preempts an idle-priority
// process whenever the generator wakes.
type sinkProcess struct {
	svc    *launch.Service
	counts *sink.CountsFile
	path   string
	// addr is where it listens (host:port): ${sink} of the starts that
	// export to it.
	addr string
}

// startSinkProcess starts self's _sink for variant on addr (host:port),
// its log logName in dir, labelled with run id, and returns once it listens.
func startSinkProcess(ctx context.Context, self, variant, addr string, dir *record.Dir, logName string, id runid.ID) (*sinkProcess, error) {
	f, err := os.CreateTemp("", leftover.SinkCountsPattern(id))
	if err != nil {
		return nil, fmt.Errorf("telemetry sink for %s: %w", variant, err)
	}
	path := f.Name()
	f.Close()
	counts, err := sink.CreateCountsFile(path)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("telemetry sink for %s: %w", variant, err)
	}
	svc, err := launch.Start(ctx, launch.Spec{
		Name:    variant + "/sink",
		Argv:    []string{self, "_sink", "--addr", addr, "--counts", path},
		Env:     runid.Label(os.Environ(), id),
		LogPath: dir.LogPath(logName),
		OpenLog: dir.LogOpener(logName),
		Ready:   launch.Readiness{TCP: addr, Timeout: 10 * time.Second},
	})
	if err != nil {
		counts.Close()
		os.Remove(path)
		return nil, fmt.Errorf("telemetry sink for %s: %w", variant, err)
	}
	return &sinkProcess{svc: svc, counts: counts, path: path, addr: addr}, nil
}

// exited returns an error naming the sink and the end of its log when
// its process has exited, and nil while it runs.
func (p *sinkProcess) exited() error {
	select {
	case <-p.svc.Done():
		if err := p.svc.ExitErr(); err != nil {
			return fmt.Errorf("telemetry sink: %w", err)
		}
		return fmt.Errorf("telemetry sink %s exited", p.svc.Spec.Name)
	default:
	}
	if p.svc.Ending() {
		// Killed at idle priority on a busy machine, its threads may
		// take a minute to end; it receives nothing meanwhile.
		return fmt.Errorf("telemetry sink %s exited (killed or crashed; its process is still ending)", p.svc.Spec.Name)
	}
	return nil
}

// Counts returns what the sink has received so far. The counts stay
// readable after Close.
func (p *sinkProcess) Counts() sink.Counts { return p.counts.Counts() }

// Close stops the sink, letting the requests in flight finish until ctx
// is done, and removes its counts file. The file stays mapped here, so
// Counts goes on answering with the final counts.
func (p *sinkProcess) Close(ctx context.Context) error {
	// At idle priority on a busy machine the sink would get no CPU to
	// finish in, nor to die in once killed: toll would exit while its
	// thread that reaps the sink is still at work, which Linux can hold
	// for minutes. It stops at normal priority.
	if !p.svc.Ending() {
		_ = pin.SetPolicies(p.svc.Pid(), nil, unix.SchedAttr{Policy: unix.SCHED_NORMAL})
	}
	err := p.svc.StopContext(ctx, sinkStopGrace)
	if rerr := os.Remove(p.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("stop telemetry sink: %w", err)
	}
	return nil
}

// sinkStopGrace bounds how long a sink may take to finish the requests in
// flight once asked to stop; its own Close waits as long (toll _sink).
const sinkStopGrace = 2 * time.Second
