package launch

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestPollWait checks the pause between readiness checks: a tenth of the
// time waited, between a millisecond and pollInterval.
func TestPollWait(t *testing.T) {
	for _, tt := range []struct{ elapsed, want time.Duration }{
		{0, minPoll},
		{5 * time.Millisecond, minPoll},
		{30 * time.Millisecond, 3 * time.Millisecond},
		{120 * time.Millisecond, 12 * time.Millisecond},
		{time.Second, pollInterval},
		{time.Minute, pollInterval},
	} {
		if got := PollWait(tt.elapsed); got != tt.want {
			t.Errorf("PollWait(%s) = %s, want %s", tt.elapsed, got, tt.want)
		}
	}
}

// TestReadyResolvesQuickStart checks that a service ready a little after
// one fixed pause of pollInterval is seen ready soon after it is, not at
// the next multiple of the pause: a start-up time is read to about a
// tenth of itself. The port opens 27 ms into the wait, where checks every
// 25 ms would see it only at 50 ms; the least lag over a few tries keeps
// a loaded machine's late wake-ups out.
func TestReadyResolvesQuickStart(t *testing.T) {
	const opens = 27 * time.Millisecond
	least := time.Hour
	for try := 0; try < 5 && least > 10*time.Millisecond; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // refused until it listens again
		opened := make(chan time.Time, 1)
		timer := time.AfterFunc(opens, func() {
			l2, err := net.Listen("tcp", addr)
			if err != nil {
				opened <- time.Time{}
				return
			}
			opened <- time.Now()
			time.AfterFunc(time.Second, func() { l2.Close() })
		})
		err = waitReady(context.Background(), Readiness{TCP: addr, Timeout: 5 * time.Second}, nil, 0, nil)
		ready := time.Now()
		timer.Stop()
		if err != nil {
			t.Fatal(err)
		}
		at := <-opened
		if at.IsZero() {
			t.Skipf("%s was taken before it could listen again", addr)
		}
		least = min(least, ready.Sub(at))
	}
	if least > 10*time.Millisecond {
		t.Errorf("ready %s after the port opened at best, want within 10ms (a check every %s would see it about 23ms late)", least, pollInterval)
	}
}
