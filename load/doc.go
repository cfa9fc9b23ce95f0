// Package load is toll's HTTP load generator.
//
// It drives one of two models:
//
//   - The open model (Config.Pacer): requests are scheduled on a fixed
//     timeline, whatever the target does, and each request's latency is
//     measured from its intended send time, not from when it was actually
//     sent. A target that stalls therefore shows the stall in the latency of
//     every request scheduled during it, instead of hiding it by slowing the
//     generator down (coordinated omission). One goroutine walks the timeline
//     and hands due requests to a pool of workers that grows on demand up to
//     Config.MaxConns, the cap on requests in flight; a request that cannot
//     be sent before the measured window ends (or the run is cancelled) is
//     counted as missed, so every scheduled request is accounted for as sent
//     or missed. Missed requests are counted with Pacer.Hits, a subtraction
//     per second, so a generator far behind a rate it cannot meet stops at
//     once.
//   - The closed model (Config.Users): N users each send a request, wait for
//     its response, think, and repeat. Latency counts from the send; a
//     stalled target is simply sent less, which this model cannot show.
//
// The run has two phases: a warm-up, whose requests are sent but not
// recorded, and a measured window, recorded per second and per entry of the
// request mix in HdrHistograms (microseconds). Entries are taken from the
// mix in smooth weighted round-robin order, so weights hold exactly over any
// period of the mix. "${id}" in a URL, header or body becomes the request's
// number.
//
// The generator is built to cost the machine little, since every cycle it
// burns is noise in the service's figures: it speaks HTTP/1.1 itself on
// connections each owned by one worker or user, with requests rendered into
// a reused buffer and responses parsed in place (no allocation per request);
// the scheduler sleeps on a timerfd rather than on Go timers, which wake up to
// a millisecond late, and sends each request at its own time (ConstantPacer:
// uniform arrivals; PoissonPacer: seeded Poisson arrivals), recording how late
// each left (Result.Lateness); Config.Quantum, when set, releases requests on
// a grid instead, one wake-up per grid step rather than per request, at the
// price of bursts; and it opens connections for a target that is slow, not
// for its own lateness (see Config.MaxConns).
package load
