// Package recovery tests what a run does when part of it breaks: a dead
// sink mid-run, damaged or unreadable trial records, and a results
// directory whose run still goes. They live apart from e2e/faults so
// that each test binary stays well inside go test's 10-minute limit on
// a busy machine.
package recovery

import (
	"testing"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
)

// TestMain lets the test binary act as toll (tolltest.Main).
func TestMain(m *testing.M) {
	tolltest.Main(m, cli.Main)
}
