// Package reprojvm runs the short versions of the published benchmarks
// whose services are JVMs (Jetty's, Sermant's, EaseAgent's), apart from
// e2e/repro's, so that each package's tests end well within go test's ten
// minutes on a busy machine.
package reprojvm
