package cli

import (
	"fmt"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/local"
	"github.com/tollperf/toll/scenario"
)

// newBackend builds the backend that runs s's services for toll run, as
// its flags ask: a Kubernetes cluster (--kubernetes), or this machine. It
// refuses what the command line asks that the backend cannot do (a usage
// error); the backend's own Check refuses the rest of s in run.Run. A new
// backend is a case here, with its flags.
func newBackend(s *scenario.Scenario, f runFlags) (backend.Backend, error) {
	switch {
	case f.kube.on:
		if f.isolateNetwork || s.Network == scenario.NetworkIsolated {
			return nil, &exitError{ExitUsage, fmt.Errorf("%s: network: isolated (--isolate-network) isolates one machine; in a cluster, use a NetworkPolicy", s.Path)}
		}
		if err := f.kubeImages.apply(s); err != nil {
			return nil, &exitError{ExitUsage, err}
		}
		client, err := f.kube.client()
		if err != nil {
			return nil, &exitError{ExitUsage, err}
		}
		return &kube.Runner{Client: client}, nil
	default:
		// A misspelt program fails here, not once the services before it
		// have started.
		if err := s.CheckPrograms(); err != nil {
			return nil, &exitError{ExitUsage, err}
		}
		return local.New(local.Options{NoCgroup: f.noCgroup, StopGrace: f.stopGrace, StopNow: f.stopNow,
			Profile: f.profile, AsyncProfiler: f.asyncProfiler, PySpy: f.pySpy}), nil
	}
}
