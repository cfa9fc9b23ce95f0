package place

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollperf/toll/container"
)

// releaseTimeout bounds the removal of one container.
const releaseTimeout = 30 * time.Second

// Containers runs services as containers through Podman's or Docker's CLI.
//
// The CLI is the process toll starts (under its supervisor, outside the
// service's cgroup: its own CPU is the engine's, not the service's), in the
// foreground: it passes toll's SIGTERM on to the container and exits with
// it. The container's processes run in a cgroup the engine creates below
// the service's (--cgroup-parent), so the service's cgroup counts their CPU
// and memory exactly as a process's, on the service's CPUs and within its
// limits; Podman's monitor (conmon) is placed below it too, and counts with
// the container. The container shares the host's network, or with ports
// has its own with each port published on the host's loopback (the
// engine's forwarder then holds the port), carries the run's
// label (container.LabelRun) and TOLL_RUN, and is removed when it stops
// (--rm) or, should the CLI have been killed, by Release.
//
// Its methods are safe for concurrent use.
type Containers struct {
	mu      sync.Mutex
	engines map[string]*container.Engine // by the scenario's engine: auto, podman, docker
}

var _ Place = (*Containers)(nil)

// Launch returns the engine's `run` of svc.Image.
func (c *Containers) Launch(ctx context.Context, svc Service) (Launch, error) {
	if svc.Cgroup == nil {
		return Launch{}, fmt.Errorf("%s: image %s: a container's cost is read from the cgroup toll makes for the service, and this run has none (see the manifest's layout.cgroup_note)", svc.Name, svc.Image)
	}
	e, err := c.engine(ctx, svc.Engine)
	if err != nil {
		return Launch{}, fmt.Errorf("%s: image %s: %w", svc.Name, svc.Image, err)
	}
	name := container.Name("toll", svc.Run.String(), strings.ReplaceAll(svc.Name, "/", "."), strconv.Itoa(svc.Start))
	argv, err := e.RunArgs(container.Spec{
		Name: name, Image: svc.Image, Argv: svc.Argv, Env: append(append([]string(nil), svc.Env...), svc.Run.Env()), Dir: svc.Dir,
		Labels:       map[string]string{container.LabelRun: svc.Run.String(), container.LabelService: svc.Name},
		CgroupParent: svc.Cgroup.Rel(), CPUs: svc.CPUs, CPULimit: svc.CPULimit, Memory: svc.MemoryLimit,
		Ports: svc.Ports,
	})
	if err != nil {
		return Launch{}, err
	}
	var forwarded []int
	for _, p := range svc.Ports {
		forwarded = append(forwarded, p.Host)
	}
	return Launch{
		// The supervisor does not join the cgroup (the CLI's CPU is not
		// the service's), but kills what is in it should toll die.
		Supervisor: []string{"--watch-cgroup-procs", strings.Join(svc.Cgroup.ProcsFiles(), ",")},
		Argv:       argv,
		Env:        os.Environ(),
		Members:    svc.Cgroup.ProcsFiles(),
		Release: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			defer cancel()
			if err := e.Remove(ctx, name); err != nil {
				return fmt.Errorf("remove container %s: %w", name, err)
			}
			return nil
		},
		Container: e.Name + " " + name,
		Forwarded: forwarded,
	}, nil
}

// engine returns the engine the scenario names, found once per run.
func (c *Containers) engine(ctx context.Context, want string) (*container.Engine, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.engines[want]; ok {
		return e, nil
	}
	e, err := container.Find(ctx, want)
	if err != nil {
		return nil, err
	}
	if c.engines == nil {
		c.engines = map[string]*container.Engine{}
	}
	c.engines[want] = e
	return e, nil
}
