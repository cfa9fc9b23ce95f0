package launch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// groupPoll is how often Stop looks for processes left in the group.
	groupPoll = 20 * time.Millisecond
	// killWait bounds the wait for the group to vanish after SIGKILL.
	killWait = 5 * time.Second
)

// Stop ends the service: it sends SIGTERM (or the Spec's StopSignal) to the
// whole process group, waits up to grace for every process of the group to
// exit, then sends SIGKILL to the processes left. It returns once the
// process toll started has been reaped. Stop is idempotent: later calls
// wait for the first and return its result.
//
// Stop returns an error only if it could not signal the group or the group
// outlived SIGKILL; a service that needed SIGKILL is reported by Killed.
func (s *Service) Stop(grace time.Duration) error {
	return s.StopContext(context.Background(), grace)
}

// StopContext is Stop with a way to cut the grace period short: once ctx is
// done (toll was interrupted a second time), whatever is left of the group
// gets SIGKILL at once, and a service not yet signalled gets no SIGTERM
// first.
func (s *Service) StopContext(ctx context.Context, grace time.Duration) error {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if !s.stopped {
		s.stopped = true
		s.stopErr = s.stop(ctx, grace)
		if s.Spec.Release != nil {
			if err := s.Spec.Release(ctx); err != nil {
				s.stopErr = errors.Join(s.stopErr, fmt.Errorf("stop %s: %w", s.Spec.Name, err))
			}
		}
	}
	return s.stopErr
}

// Killed reports whether Stop had to send SIGKILL because the group
// outlived the grace period.
func (s *Service) Killed() bool {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	return s.killed
}

// stop does the work of StopContext.
func (s *Service) stop(ctx context.Context, grace time.Duration) error {
	s.stopping.Store(true)
	if s.groupGone() {
		// Signalling an empty group would risk hitting a new group that
		// reuses the id.
		return nil
	}
	if ctx.Err() == nil {
		if err := s.signalGroup(cmp.Or(s.Spec.StopSignal, unix.SIGTERM)); err != nil {
			return err
		}
		if s.awaitGroup(ctx, grace) {
			return nil
		}
	}
	s.killed = true
	if err := s.signalGroup(unix.SIGKILL); err != nil {
		return err
	}
	if !s.awaitGroup(context.Background(), killWait) {
		return fmt.Errorf("stop %s: process group %d still alive %v after SIGKILL", s.Spec.Name, s.pid, killWait)
	}
	return nil
}

// signalGroup sends sig to every process in the service's group.
func (s *Service) signalGroup(sig unix.Signal) error {
	err := unix.Kill(-s.pid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: send %v to process group %d: %w", s.Spec.Name, sig, s.pid, err)
	}
	return nil
}

// awaitGroup waits up to d, or until ctx is done, for the group to be gone
// and reports whether it is.
func (s *Service) awaitGroup(ctx context.Context, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for {
		if s.groupGone() {
			return true
		}
		select {
		case <-deadline.C:
			return s.groupGone()
		case <-ctx.Done():
			return s.groupGone()
		case <-s.done:
		case <-tick.C:
		}
	}
}

// groupGone reports whether the leader has been reaped and no other process
// of its group is alive. Zombies do not count: a child orphaned into the
// group may wait for an init that never reaps it.
func (s *Service) groupGone() bool {
	select {
	case <-s.done:
	default:
		return false
	}
	procs, err := s.proc.AllProcs()
	if err != nil {
		// Without /proc, fall back on the kernel's view, zombies included.
		return unix.Kill(-s.pid, 0) != nil
	}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // gone since the listing
		}
		if st.PGRP == s.pid && st.State != "Z" {
			return false
		}
	}
	return true
}
