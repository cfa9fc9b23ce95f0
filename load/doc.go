// Package load is toll's HTTP load generator.
//
// It drives an open-model load: requests are scheduled on a fixed timeline
// given by a Pacer (relative to Config.Start), whatever the target does, and
// each request's latency is measured from its intended send time, not from
// when it was actually sent. A target that stalls therefore shows the stall in
// the latency of every request scheduled during it, instead of hiding it by
// slowing the generator down (coordinated omission).
//
// The timeline has two phases: a warm-up, whose requests are sent but not
// recorded, and a measured window, recorded per second in HdrHistograms (in
// microseconds) and in totals. Requests are taken from a weighted mix in a
// deterministic smooth weighted round-robin order.
//
// One goroutine walks the timeline and hands due requests to a pool of worker
// goroutines that grows on demand up to Config.MaxConns, the cap on requests
// in flight. A request that is due while MaxConns requests are in flight waits
// for a free worker (its latency still counts from its intended time); one that
// cannot be sent before the measured window ends is counted as missed, so every
// scheduled request is accounted for as sent or missed.
package load
