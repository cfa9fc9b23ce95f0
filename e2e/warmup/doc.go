// Package warmup holds toll's end-to-end tests of variant warm-ups: until
// a JVM's JIT compilation settles, at their own rate or users, in phases,
// on every CPU. They run real JVMs and services, each for tens of seconds,
// and stand apart from the e2e/measure package so that each package's
// tests end well within go test's ten minutes on a busy machine.
package warmup
