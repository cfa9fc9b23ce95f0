// Package runtimes lists the language runtimes toll reads (package
// runtime's Runtime), in the order of their rows in a report. A new
// runtime is a package of its own under probe, and one line here.
package runtimes

import (
	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/probe/node"
	"github.com/tollperf/toll/probe/runtime"
)

// All returns every runtime toll reads.
func All() runtime.Set {
	return runtime.Set{
		jvm.Runtime{},
		node.Runtime{},
	}
}
