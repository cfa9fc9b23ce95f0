package run

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
)

// search is one variant's search for its highest sustainable rate: the
// rate doubles until a trial fails, then the bracket [pass, fail] is
// bisected until it is narrower than the precision asked. A rate fails on
// two failed trials in a row: a failed trial is run again at its rate
// before the search believes it, since one stall of a busy machine (a GC
// pause, a neighbour's burst) fails a trial at any rate, and a search
// that took it for the maximum would end far below it.
type search struct {
	res     record.FindMaxVariant
	next    float64 // the rate to try next
	pending float64 // a rate whose one failed trial is being tried again
	done    bool
}

// advance takes a trial's outcome and picks the next rate.
func (s *search) advance(t record.FindMaxTrial, precision float64, maxTrials int) {
	s.res.Trials = append(s.res.Trials, t)
	if len(s.res.Trials) >= maxTrials {
		s.done = true
	}
	if !t.Pass && s.pending != t.Rate {
		s.pending, s.next = t.Rate, t.Rate // try it again
		return
	}
	s.pending = 0
	if t.Pass {
		s.res.MaxRate = max(s.res.MaxRate, t.Rate)
	} else if s.res.FailedRate == 0 || t.Rate < s.res.FailedRate {
		s.res.FailedRate = t.Rate
	}
	lo, hi := s.res.MaxRate, s.res.FailedRate
	switch {
	case hi == 0:
		s.next = 2 * lo // still rising
	case lo == 0:
		s.next = hi / 2 // nothing passed yet: fall
	default:
		s.next = (lo + hi) / 2
	}
	if hi > 0 && lo > 0 && hi-lo <= precision*lo {
		s.res.Converged = true
		s.done = true
	}
	if hi > 0 && hi < 1 {
		s.done = true
	}
}

// findMax runs the searches of every variant in lockstep, one trial per
// unfinished variant per round in a random order (so that a machine that
// drifts affects them alike), with every variant's services started once.
// It writes findmax.json as it goes, so an interrupted search keeps what it
// found.
func (r *runner) findMax(ctx context.Context, seed int64) error {
	fm := r.s.FindMax
	out := &record.FindMax{SLOP99MS: float64(fm.SLOP99.D().Microseconds()) / 1000, Precision: fm.Precision}
	searches := map[string]*search{}
	var names []string
	for _, v := range r.s.Variants {
		names = append(names, v.Name)
		searches[v.Name] = &search{res: record.FindMaxVariant{Name: v.Name}, next: fm.Start}
	}
	write := func() error {
		out.Variants = out.Variants[:0]
		for _, n := range names {
			out.Variants = append(out.Variants, searches[n].res)
		}
		return r.dir.WriteFindMax(out)
	}
	for _, n := range names {
		if err := r.backend.Start(ctx, n, 0); err != nil {
			return interrupted(ctx, r, err)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7011))
	index := 0
	for round := 1; ; round++ {
		order := slices.Clone(names)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		ran := false
		for i, n := range order {
			s := searches[n]
			if s.done {
				continue
			}
			ran = true
			index++
			began := time.Now()
			tr, res, err := r.backend.Trial(ctx, &plan.Trial{Index: index, Round: round, Step: round - 1, Rate: s.next, Variant: n, Order: i})
			if tr != nil {
				err = r.keep(tr, res)
			}
			s.res.SearchS += time.Since(began).Seconds()
			if err != nil {
				write()
				return interrupted(ctx, r, err)
			}
			s.advance(judge(tr, fm.SLOP99.D()), fm.Precision, fm.MaxTrials)
			if err := write(); err != nil {
				return err
			}
		}
		if !ran {
			return nil
		}
	}
}

// interrupted wraps err as an interruption when ctx is done.
func interrupted(ctx context.Context, r *runner, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w after %d trials: %v", ErrInterrupted, r.done, err)
	}
	return err
}

// judge decides whether a trial's rate was sustained: every scheduled
// request sent, none failed, at least 99% of the rate completed, and p99
// within slo.
func judge(tr *record.Trial, slo time.Duration) record.FindMaxTrial {
	t := record.FindMaxTrial{Trial: tr.Index, Rate: tr.TargetRate, Errors: tr.Load.Errors.Total(), Missed: tr.Load.Missed}
	if w := tr.Window().Seconds(); w > 0 {
		t.Achieved = float64(tr.Load.Completed) / w
	}
	if h, err := hdr.Decode([]byte(tr.Load.Histogram)); err == nil && h.TotalCount() > 0 {
		t.P99MS = float64(h.ValueAtQuantile(99)) / 1000
	}
	switch {
	case t.Errors > 0:
		t.Why = fmt.Sprintf("%d errors", t.Errors)
	case t.Missed > 0:
		t.Why = fmt.Sprintf("%d requests never sent", t.Missed)
	case t.Achieved < 0.99*t.Rate:
		t.Why = fmt.Sprintf("achieved %.1f req/s", t.Achieved)
	case t.P99MS > float64(slo.Microseconds())/1000:
		t.Why = fmt.Sprintf("p99 %.2f ms above the SLO", t.P99MS)
	default:
		t.Pass = true
	}
	return t
}
