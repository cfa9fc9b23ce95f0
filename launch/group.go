package launch

import (
	"context"
	"errors"
	"slices"
	"time"
)

// failedStartGrace is the grace StartGroup gives the services it already
// started when a later one fails.
const failedStartGrace = 5 * time.Second

// Group is the services of one variant. They are started in order, each
// once the previous one is ready, and stopped in reverse order.
type Group struct {
	services []*Service
}

// StartGroup starts the services of specs in order, each after the previous
// one is ready. If one fails, or an earlier one exits in the meantime,
// StartGroup stops those it started and returns the error; once kill is
// done, they get no grace period (see Service.StopContext).
func StartGroup(ctx, kill context.Context, specs []Spec) (*Group, error) {
	g := &Group{}
	for _, spec := range specs {
		// A readiness address may be served by an earlier service of the
		// group (through a proxy, say), never by a process outside it.
		var earlier []int
		for _, s := range g.services {
			earlier = append(append(earlier, s.Pid()), members(s.Spec)...)
		}
		s, err := start(ctx, spec, earlier)
		if err == nil {
			g.services = append(g.services, s)
			err = g.exited()
		}
		if err != nil {
			return nil, errors.Join(err, g.StopContext(kill, failedStartGrace))
		}
	}
	return g, nil
}

// exited returns an error for the first service of g that has exited.
func (g *Group) exited() error {
	for _, s := range g.services {
		select {
		case <-s.Done():
			log, head := s.logExcerpt(startFailureTail)
			return &StartError{
				Name:    s.Spec.Name,
				Err:     exited("while later services started", s.waitErr),
				Log:     log,
				LogHead: head,
			}
		default:
		}
	}
	return nil
}

// Stop stops the services in reverse order, each with the given grace, and
// returns their errors joined.
func (g *Group) Stop(grace time.Duration) error {
	return g.StopContext(context.Background(), grace)
}

// StopContext is Stop, with every grace period cut short once ctx is done
// (see Service.StopContext).
func (g *Group) StopContext(ctx context.Context, grace time.Duration) error {
	var errs []error
	for _, s := range slices.Backward(g.services) {
		errs = append(errs, s.StopContext(ctx, grace))
	}
	return errors.Join(errs...)
}

// Services returns the services in start order.
func (g *Group) Services() []*Service {
	return slices.Clone(g.services)
}
