package local

import (
	"fmt"
	"strings"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/netns"
	"github.com/tollperf/toll/scenario"
)

// Check refuses, before anything is created, what this machine cannot run
// of s (backend.Backend): a scenario that asks for network isolation
// anywhere but in a network namespace that holds only loopback, since an
// agent must never reach the outside because the isolation silently
// failed.
func (b *Backend) Check(s *scenario.Scenario, _ backend.Request) error {
	return checkNetwork(s)
}

// checkNetwork refuses s when it asks for network isolation and this
// network namespace holds more than loopback.
func checkNetwork(s *scenario.Scenario) error {
	if s.Network != scenario.NetworkIsolated {
		return nil
	}
	ok, others, err := netns.Isolated()
	if err != nil {
		return fmt.Errorf("%s: network: isolated: %w", s.Path, err)
	}
	if !ok {
		return fmt.Errorf("%s: network: isolated, but this network namespace has %s besides loopback (toll run starts a namespace of its own; run.Run does not)", s.Path, strings.Join(others, ", "))
	}
	return nil
}
