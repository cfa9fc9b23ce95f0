// Package launch starts the services of one variant, waits until they are
// ready, and stops them without leaking a child.
//
// Each service runs in its own process group, so that Stop reaches the
// wrappers' children too (a shell script that starts a JVM, a launcher that
// forks a daemon): Stop sends SIGTERM to the whole group, waits for the group
// to empty, and sends SIGKILL to whatever is left when the grace period ends.
//
// Each service is also started with Pdeathsig set to SIGKILL, so that the
// kernel kills it if toll dies without a chance to clean up (kill -9, a
// crash). Linux ties Pdeathsig to the thread that forked the child, not to
// the process: if that thread exited, the child would be killed with it. The
// Go runtime only ends threads that were locked to a goroutine when the
// goroutine exits, and a thread that forked might later be handed to such a
// goroutine. launch therefore forks each service from a goroutine locked to
// its thread for the whole life of the service; that goroutine then blocks in
// wait4, which holds a thread anyway, so the lock costs nothing.
//
// Pdeathsig only reaches the process that toll started, not its own
// children. toll therefore starts every service through its _exec
// supervisor (package supervise), with a catchable Spec.DeathSignal: the
// supervisor kills what the service started before it exits.
//
// StopContext cuts the grace period short when its context is done (toll's
// second interrupt): what is left of the group gets SIGKILL at once.
package launch
