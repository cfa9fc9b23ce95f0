package local

import (
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/variant"
)

// resolveVariant applies variant name's changes to the scenario's services
// and fills in placeholders: ports come from pool, once per variant and name.
func resolveVariant(s *scenario.Scenario, name string, pool *portPool, sinkURL, self string) (*variant.Variant, error) {
	return variant.Resolve(s, name, variant.Placeholders{Port: func(string) (int, error) { return pool.take() }, Sink: sinkURL, Toll: self})
}
