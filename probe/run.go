package probe

import (
	"context"
	"time"
)

// Run calls s.Sample at the ticks at+k*interval (k = 0, 1, ...) that are not
// already past, and fn with each sample, until ctx is done. The ticks stay
// aligned to at whatever a sample costs; a tick missed because a sample ran
// late is skipped. Run returns quietly when the sampled process vanishes;
// other errors skip their tick. interval must be positive.
func Run(ctx context.Context, s Sampler, interval time.Duration, at time.Time, fn func(Sample)) {
	if interval <= 0 {
		return
	}
	next := tickAtOrAfter(at, interval, time.Now())
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if ctx.Err() != nil {
			return
		}
		sample, err := s.Sample()
		switch {
		case err == nil:
			fn(sample)
		case gone(err):
			return
		}
		now := time.Now()
		after := next.Add(interval)
		if now.After(after) {
			after = now // the sample overran: skip the ticks it missed
		}
		next = tickAtOrAfter(at, interval, after)
		timer.Reset(next.Sub(now))
	}
}

// tickAtOrAfter returns the first tick at+k*interval, k >= 0, not before t.
func tickAtOrAfter(at time.Time, interval time.Duration, t time.Time) time.Time {
	if !t.After(at) {
		return at
	}
	k := (t.Sub(at) + interval - 1) / interval
	return at.Add(k * interval)
}
