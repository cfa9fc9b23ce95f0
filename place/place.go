// Package place is where a service's processes run: on the host, as a
// process toll starts (Host), or in a container that a container engine
// starts (Containers). Kubernetes pods would be a third.
//
// A place only says how to start a service there; the orchestration is
// run's and launch's, written once for every place: toll starts what
// Launch returns under its _exec supervisor, in the service's process
// group; reads its cost from the service's cgroup, which every place puts
// the service's processes in; checks that the readiness address is the
// service's; stops the group; and then calls Release for what the place
// keeps (a container's record). A run killed outright leaves what the
// place labelled for package leftover.
package place

import (
	"context"
	"strings"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/container"
	"github.com/tollperf/toll/runid"
)

// Service is what a place needs to know of one start of one service.
type Service struct {
	// Name is the variant and service, e.g. "baseline/provider".
	Name string
	// Start numbers the starts of the service's variant in the run, from 1.
	Start int
	// Run is the run's label.
	Run runid.ID
	// Argv is the command, placeholders filled in.
	Argv []string
	// Env is the scenario's environment for the service (KEY=value),
	// HostEnv the complete environment of a process on the host (toll's
	// own with Env over it).
	Env, HostEnv []string
	// Dir is the working directory.
	Dir string
	// Image and Engine run the service as a container (scenario.Service).
	Image, Engine string
	// Ports are the container's published ports; none shares the host's
	// network.
	Ports []container.Port
	// Cgroup is the service's cgroup; nil where the run has none.
	Cgroup *cgroup.Group
	// CPUs, CPULimit and MemoryLimit are the service's CPU set and limits
	// (the cgroup has them already; a place may also apply them itself).
	CPUs        string
	CPULimit    float64
	MemoryLimit int64
	// Idle starts the service at idle priority (SCHED_IDLE) on its CPUs,
	// where a place can: a start warmed beside the rounds, which must take
	// no CPU from them from its first instruction.
	Idle bool
}

// Launch is how toll starts a service in a place.
type Launch struct {
	// Supervisor are the flags of toll's _exec supervisor, e.g.
	// --cgroup-procs to join the service's cgroup.
	Supervisor []string
	// Argv, Env and Dir are the command the supervisor runs; Env is
	// labelled with the run before it starts.
	Argv, Env []string
	Dir       string
	// Members are the cgroup.procs files of cgroups whose processes (and
	// those of the cgroups below them) are the service's, besides the
	// tree of the process toll starts: a container's processes, which
	// its engine starts outside that tree.
	Members []string
	// Release removes what the place keeps of the service once its
	// processes are gone; nil when there is nothing.
	Release func(context.Context) error
	// Container names the container, for the manifest; "" on the host.
	Container string
	// Forwarded are host ports the place forwards to the service: the
	// listener there is the engine's (Podman's conmon holds it, Docker's
	// docker-proxy forwards through it), not one of the service's
	// processes.
	Forwarded []int
}

// A Place starts services somewhere.
type Place interface {
	// Launch returns how to start svc in the place.
	Launch(ctx context.Context, svc Service) (Launch, error)
}

// Host runs services as processes of the host: the supervisor joins the
// service's cgroup and CPU set before it starts the service, so the service
// and all it forks are accounted from their first instruction.
type Host struct{}

var _ Place = Host{}

// Launch returns the service's own command under the supervisor.
func (Host) Launch(_ context.Context, svc Service) (Launch, error) {
	l := Launch{Argv: svc.Argv, Env: svc.HostEnv, Dir: svc.Dir}
	if svc.Cgroup != nil {
		l.Supervisor = append(l.Supervisor, "--cgroup-procs", strings.Join(svc.Cgroup.ProcsFiles(), ","))
	}
	if svc.CPUs != "" {
		l.Supervisor = append(l.Supervisor, "--cpus", svc.CPUs)
	}
	if svc.Idle {
		l.Supervisor = append(l.Supervisor, "--idle")
	}
	return l, nil
}
