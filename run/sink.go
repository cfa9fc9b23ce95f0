package run

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/tollperf/toll/launch"
	"github.com/tollperf/toll/runid"
	"github.com/tollperf/toll/sink"
)

// telemetrySink is where a variant's agents export: the URL they are
// given as ${sink} and what has arrived there.
type telemetrySink interface {
	URL() string
	Counts() sink.Counts
	Close(ctx context.Context) error
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
	url    string
	svc    *launch.Service
	counts *sink.CountsFile
	path   string
}

// startSinkProcess starts self's _sink for variant on port of loopback,
// its log at logPath, labelled with run id, and returns once it listens.
func startSinkProcess(ctx context.Context, self, variant string, port int, logPath string, id runid.ID) (*sinkProcess, error) {
	f, err := os.CreateTemp("", "toll-sink-*.counts")
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
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	svc, err := launch.Start(ctx, launch.Spec{
		Name:    variant + "/sink",
		Argv:    []string{self, "_sink", "--addr", addr, "--counts", path},
		Env:     runid.Label(os.Environ(), id),
		LogPath: logPath,
		Ready:   launch.Readiness{TCP: addr, Timeout: 10 * time.Second},
	})
	if err != nil {
		counts.Close()
		os.Remove(path)
		return nil, fmt.Errorf("telemetry sink for %s: %w", variant, err)
	}
	return &sinkProcess{url: "http://" + addr, svc: svc, counts: counts, path: path}, nil
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
		return nil
	}
}

// URL is the sink's base URL.
func (p *sinkProcess) URL() string { return p.url }

// Counts returns what the sink has received so far. The counts stay
// readable after Close.
func (p *sinkProcess) Counts() sink.Counts { return p.counts.Counts() }

// Close stops the sink, letting the requests in flight finish within
// ctx's time, and removes its counts file. The file stays mapped here, so
// Counts goes on answering with the final counts.
func (p *sinkProcess) Close(ctx context.Context) error {
	grace := 2 * time.Second
	if d, ok := ctx.Deadline(); ok {
		grace = time.Until(d)
	}
	err := p.svc.StopContext(ctx, grace)
	if rerr := os.Remove(p.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("stop telemetry sink: %w", err)
	}
	return nil
}
