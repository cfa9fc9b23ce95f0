package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/probe/jvm"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/sink"
)

// warmupRead is how often a warm-up reads its JVMs' JIT counters.
const warmupRead = time.Second

// variantWarmup is a finished variant warm-up, which the variant's next
// trial records.
type variantWarmup struct {
	start  time.Time     // its load's origin
	lasted time.Duration // from start to the end of its load
	rec    *record.VariantWarmup
	// completed counts the warm-up's completed requests, and telemetry
	// is the variant's sink's count at its start (nil without a sink):
	// the telemetry they caused belongs to the trial's cycle, as their
	// requests do.
	completed uint64
	telemetry *sink.Counts
}

// warmUp runs the variant warm-up (load.variant_warmup) of every trial of
// pts whose freshly started services are owed one (not an idle trial's):
// load at each trial's step, all at once (a duet's two sides together), for
// load.variant_warmup, or, with load.variant_warmup_until, until every
// measured JVM among them has settled. Each variant's started keeps the
// outcome for its trial. With pinning.warmup: all the services run on every
// CPU meanwhile, and on their own again when it returns. It is the one place
// variant warm-ups run, in every schedule.
func (r *runner) warmUp(ctx context.Context, pts ...*plan.Trial) (err error) {
	longest := r.s.Load.VariantWarmup.D()
	var owed []*plan.Trial
	for _, pt := range pts {
		st := r.running[pt.Variant]
		if st == nil || pt.Idle || st.warmed {
			continue
		}
		st.warmed = true
		if longest > 0 {
			owed = append(owed, pt)
		}
	}
	if len(owed) == 0 {
		return nil
	}
	names := make([]string, len(owed))
	for i, pt := range owed {
		names[i] = pt.Variant
	}
	restore := r.widenForWarmup(names)
	defer func() {
		if rerr := restore(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("variant warm-up: %w", rerr))
		}
	}()
	wctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	origin := newOrigin()
	errs := make([]error, len(owed))
	ends := make([]time.Time, len(owed))
	done := make([]uint64, len(owed))
	tels := make([]*sink.Counts, len(owed))
	var wg sync.WaitGroup
	for i, pt := range owed {
		st := r.running[pt.Variant]
		if c := r.sinkOf(pt.Variant); c != nil {
			n := c.Counts()
			tels[i] = &n
		}
		cfg, _ := r.loadConfig(st, warmupTrial(r.s, pt, st.rewarm), origin, 0, longest)
		st.rewarm = false
		wg.Go(func() {
			res, err := load.Run(wctx, cfg)
			ends[i] = time.Now()
			if res != nil {
				done[i] = res.Completed + res.WarmupCompleted
				if !res.MeasureEnd.IsZero() && res.MeasureEnd.Before(ends[i]) {
					ends[i] = res.MeasureEnd
				}
			}
			errs[i] = err
			stop(errWarmupEnded) // the others end with it
		})
		// A service that exits ends the warm-up; its trial reports it.
		for _, svc := range st.group.Services() {
			go func() {
				select {
				case <-svc.Done():
					stop(errWarmupEnded)
				case <-wctx.Done():
				}
			}()
		}
	}
	var verdict jitVerdict
	if u := r.s.Load.VariantWarmupUntil; u != nil {
		verdict = r.watchJIT(wctx, jitRule{below: u.JITBelow.D(), over: u.Over.D()}, owed, origin)
		stop(errWarmupEnded)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("variant warm-up: %w", err)
	}
	for i, pt := range owed {
		if errs[i] != nil && !errors.Is(errs[i], context.Canceled) && !errors.Is(errs[i], errWarmupEnded) {
			return fmt.Errorf("variant warm-up of %s: %w", pt.Variant, errs[i])
		}
		st := r.running[pt.Variant]
		w := &variantWarmup{start: origin, lasted: max(ends[i].Sub(origin), 0), completed: done[i], telemetry: tels[i]}
		if u := r.s.Load.VariantWarmupUntil; u != nil {
			w.rec = &record.VariantWarmup{MaxS: r.s.Load.VariantWarmup.D().Seconds(), Settled: verdict.settled || verdict.bySide[pt.Variant],
				NoJVM: verdict.jvms[pt.Variant] == 0, JITMsPerS: verdict.rates[pt.Variant]}
			if w.rec.NoJVM {
				r.note(fmt.Sprintf("%s: no measured service is a JVM (none publishes hsperfdata), so its variant warm-up has no compilation to wait for and lasts load.variant_warmup (%s)",
					pt.Variant, r.s.Load.VariantWarmup))
			}
		}
		st.warmup = w
		r.mu.Lock()
		fmt.Fprintln(r.opt.Progress, warmupLine(pt.Variant, w))
		r.mu.Unlock()
	}
	return nil
}

// warmupTrial is pt as its variant warm-up loads it when its services are
// fresh: as load.variant_warmup_users users, or at load.variant_warmup_rate
// for an open-model step. Services warmed again beside a fresh duet partner
// (rewarm) take it at pt's own load, where more would only take CPU from
// the partner's compilation.
func warmupTrial(s *scenario.Scenario, pt *plan.Trial, rewarm bool) *plan.Trial {
	if rewarm {
		return pt
	}
	w := *pt
	switch {
	case s.Load.VariantWarmupUsers > 0:
		w.Rate, w.Users = 0, s.Load.VariantWarmupUsers
	case s.Load.VariantWarmupRate > 0 && pt.Users == 0:
		w.Rate = s.Load.VariantWarmupRate
	default:
		return pt
	}
	return &w
}

// warmupLine is the progress line of a variant's finished warm-up.
func warmupLine(variant string, w *variantWarmup) string {
	line := fmt.Sprintf("variant warm-up of %s: %s", variant, w.lasted.Round(100*time.Millisecond))
	switch rec := w.rec; {
	case rec == nil:
	case rec.Settled:
		line += ", JIT settled (" + describeRates(rec.JITMsPerS) + ")"
	case rec.NoJVM:
		line += ", no JVM to wait for"
	default:
		line += ", at its maximum without settling (" + describeRates(rec.JITMsPerS) + ")"
	}
	return line
}

// errWarmupEnded ends a warm-up's load: its JVMs settled, its maximum
// passed, or a service exited.
var errWarmupEnded = errors.New("variant warm-up ended")

// jitVerdict is how a warm-up's JVMs ended it.
type jitVerdict struct {
	settled bool
	// bySide says which variants' JVMs had settled when the warm-up
	// ended: in a duet one side may have settled while its partner, whose
	// warm-up both wait for, had not.
	bySide map[string]bool
	jvms   map[string]int                // JVMs found, by variant
	rates  map[string]map[string]float64 // latest ms/s by variant, then service
}

// watchJIT reads the JIT counters of the measured JVMs of owed's variants
// once a second from origin, and returns as soon as every one of them has
// settled by rule (settled), or when ctx ends (the warm-up's maximum, a
// service that exited, an interrupt). A service that is not yet a JVM is
// looked at again every time, so that a JVM started late is waited for.
func (r *runner) watchJIT(ctx context.Context, rule jitRule, owed []*plan.Trial, origin time.Time) jitVerdict {
	type watched struct {
		variant, key string // key: variant/service, in the history
		svc          string
		tree         processes
		jvm          *jvm.Reader
	}
	var ws []*watched
	for _, pt := range owed {
		st := r.running[pt.Variant]
		for i, svc := range st.group.Services() {
			if !st.runs[i].Measured {
				continue
			}
			if tree := serviceProcesses(st, i, svc.Pid()); tree != nil {
				name := st.runs[i].Name
				ws = append(ws, &watched{variant: pt.Variant, key: pt.Variant + "/" + name, svc: name, tree: tree})
			}
		}
	}
	defer func() {
		for _, w := range ws {
			if w.jvm != nil {
				w.jvm.Close()
			}
		}
	}()
	h := jitHistory{}
	verdict := func(settled bool) jitVerdict {
		v := jitVerdict{settled: settled, bySide: map[string]bool{}, jvms: map[string]int{}, rates: map[string]map[string]float64{}}
		_, rates := rule.settled(h)
		for _, pt := range owed {
			v.bySide[pt.Variant], _ = rule.settled(h.of(pt.Variant))
		}
		for _, w := range ws {
			if ms, ok := rates[w.key]; ok {
				v.jvms[w.variant]++
				if v.rates[w.variant] == nil {
					v.rates[w.variant] = map[string]float64{}
				}
				v.rates[w.variant][w.svc] = ms
			}
		}
		return v
	}
	timer := time.NewTimer(time.Until(origin))
	defer timer.Stop()
	for k := 1; ; k++ {
		select {
		case <-ctx.Done():
			return verdict(false)
		case <-timer.C:
		}
		now := time.Now()
		for _, w := range ws {
			if w.jvm == nil {
				if _, err := w.tree.Sample(); err != nil {
					continue
				}
				if w.jvm, _ = findJVM(w.tree); w.jvm == nil {
					continue
				}
			}
			c, err := w.jvm.Counters()
			if err != nil {
				continue // the JVM exited; the trial will say so
			}
			h.add(w.key, jitPoint{at: now.Sub(origin), jit: c.JITTime})
		}
		if ok, _ := rule.settled(h); ok {
			return verdict(true)
		}
		timer.Reset(time.Until(origin.Add(time.Duration(k) * warmupRead)))
	}
}

// describeRates writes a warm-up's JIT rates by service: "consumer
// 3.2 ms/s, provider 0.4 ms/s".
func describeRates(rates map[string]float64) string {
	var parts []string
	for _, svc := range slices.Sorted(maps.Keys(rates)) {
		parts = append(parts, fmt.Sprintf("%s %.1f ms/s", svc, rates[svc]))
	}
	return strings.Join(parts, ", ")
}
