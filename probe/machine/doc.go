// Package machine samples the machine as a whole from /proc: CPU time in
// total and per CPU (busy, idle, stolen) and memory in use. toll reads it
// once per sampling interval to show how busy the machine was around a
// trial and to flag trials where the CPUs were saturated or the hypervisor
// stole time.
//
// A Sampler reads cumulative counters (Sample); Between turns two of them
// into shares of the time in between (Usage).
package machine
