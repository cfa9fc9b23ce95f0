package probe_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollperf/toll/probe"
)

// fakeSampler takes cost to sample and fails on chosen calls.
type fakeSampler struct {
	cost time.Duration
	errs map[int]error // by call number, from 1

	mu    sync.Mutex
	calls int
}

func (f *fakeSampler) Sample() (probe.Sample, error) {
	now := time.Now()
	f.mu.Lock()
	f.calls++
	err := f.errs[f.calls]
	f.mu.Unlock()
	time.Sleep(f.cost)
	return probe.Sample{Time: now}, err
}

func TestRunAligned(t *testing.T) {
	const interval = 100 * time.Millisecond
	tests := []struct {
		name    string
		atShift time.Duration // at relative to now
		cost    time.Duration
	}{
		{"start in the future", 30 * time.Millisecond, 0},
		{"start in the past", -1234 * time.Millisecond, 0},
		{"costly samples do not drift", 0, 30 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A busy machine may wake the sampler half an interval late
			// (53 ms at load 20); a sampler that drifts or ignores at is
			// off in every attempt, so one attempt of three must be clean.
			var errs []string
			for range 3 {
				if errs = alignedRun(interval, tt.atShift, tt.cost); len(errs) == 0 {
					return
				}
				t.Logf("attempt: %s", strings.Join(errs, "; "))
			}
			t.Error(strings.Join(errs, "\n"))
		})
	}
}

// alignedRun runs probe.Run for 730 ms from at = now + atShift with
// samples that take cost, and returns what is wrong with the samples'
// times: each must fall in the first half of its own tick of interval
// from at, none before Run started.
func alignedRun(interval, atShift, cost time.Duration) []string {
	now := time.Now()
	at := now.Add(atShift)
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(730*time.Millisecond))
	defer cancel()
	var got []probe.Sample
	probe.Run(ctx, &fakeSampler{cost: cost}, interval, at, func(s probe.Sample) { got = append(got, s) })
	if len(got) < 5 {
		return []string{fmt.Sprintf("%d samples in 730ms at %v, want at least 5", len(got), interval)}
	}
	var errs []string
	prevK := int64(-1)
	for i, s := range got {
		if s.Time.Before(now) {
			errs = append(errs, fmt.Sprintf("sample %d at %v, before Run started", i, s.Time.Sub(now)))
		}
		off := s.Time.Sub(at)
		k := int64(off / interval)
		late := off - time.Duration(k)*interval
		if off < 0 || late > interval/2 {
			errs = append(errs, fmt.Sprintf("sample %d at at%+v: %v after tick %d, want aligned to a tick", i, off, late, k))
		}
		if k <= prevK {
			errs = append(errs, fmt.Sprintf("sample %d on tick %d after tick %d", i, k, prevK))
		}
		prevK = k
	}
	return errs
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name      string
		errs      map[int]error
		wantCalls int
		wantEarly bool // Run returns before ctx is done
	}{
		{"vanished process ends quietly", map[int]error{3: fmt.Errorf("sample: %w", fs.ErrNotExist)}, 2, true},
		{"other errors skip their tick", map[int]error{2: errors.New("transient")}, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 230*time.Millisecond)
			defer cancel()
			n := 0
			probe.Run(ctx, &fakeSampler{errs: tt.errs}, 50*time.Millisecond, time.Now(), func(probe.Sample) { n++ })
			early := ctx.Err() == nil
			if early != tt.wantEarly {
				t.Errorf("Run returned early: %v, want %v", early, tt.wantEarly)
			}
			if tt.wantEarly && n != tt.wantCalls || !tt.wantEarly && n < tt.wantCalls {
				t.Errorf("fn called %d times, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeSampler{}
	probe.Run(ctx, f, time.Millisecond, time.Now(), func(probe.Sample) {})
	if f.calls != 0 {
		t.Errorf("Sample called %d times after cancel", f.calls)
	}
}
