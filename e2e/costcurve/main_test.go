package costcurve

import (
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestMain lets the test binary act as toll (tolltest.Main).
func TestMain(m *testing.M) {
	tolltest.Main(m, cli.Main)
}
