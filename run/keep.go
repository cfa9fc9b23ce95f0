package run

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tollperf/toll/backend"
	"github.com/tollperf/toll/load"
	"github.com/tollperf/toll/record"
)

// keep writes a measured trial (and its latency log when res is there),
// counts it and prints its line; its error is the trial's own when it was
// cut short. Every backend's trials are kept here.
func (r *runner) keep(tr *record.Trial, res *load.Result) error {
	r.mu.Lock()
	if aside := r.carry[tr.Variant]; aside != nil {
		carryStart(tr, aside)
		delete(r.carry, tr.Variant)
	}
	r.mu.Unlock()
	if err := r.dir.WriteTrial(tr); err != nil {
		return err
	}
	r.mu.Lock()
	r.lastTrial[tr.Variant] = tr
	r.trials[tr.Index] = tr
	r.mu.Unlock()
	if res != nil {
		if err := r.writeHistogramLog(tr, res); err != nil {
			return err
		}
	}
	r.finished(tr, res)
	if tr.Interrupted {
		return fmt.Errorf("trial %d (%s, round %d): %s", tr.Index, tr.Variant, tr.Round, tr.Error)
	}
	return nil
}

// writeHistogramLog writes the trial's per-second latency histograms as an
// HdrHistogram interval log (trials/NNNN-VARIANT.hlog), the format
// HdrHistogram's own tools (HistogramLogAnalyzer, hdr-plot) read. Values are
// microseconds; each interval is tagged with the variant.
func (r *runner) writeHistogramLog(tr *record.Trial, res *load.Result) error {
	var b bytes.Buffer
	lw := hdr.NewHistogramLogWriter(&b)
	start := tr.MeasureStart.UnixMilli()
	lw.SetBaseTime(start)
	from := "the intended send time"
	if tr.TargetUsers > 0 {
		from = "the send (closed model)"
	}
	lw.OutputComment(fmt.Sprintf("toll trial %d: %s, round %d, %s; latency in microseconds from %s", tr.Index, tr.Variant, tr.Round,
		trialStep(tr), from))
	lw.OutputLogFormatVersion()
	lw.OutputStartTime(start)
	lw.OutputBaseTime(start)
	lw.OutputLegend()
	for _, iv := range res.Intervals {
		h := iv.Latency()
		h.SetTag(tr.Variant)
		h.SetStartTimeMs(start + iv.Offset.Milliseconds())
		h.SetEndTimeMs(start + (iv.Offset + time.Second).Milliseconds())
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return fmt.Errorf("trial %d: histogram log: %w", tr.Index, err)
		}
	}
	return r.dir.WriteFile(strings.TrimSuffix(record.TrialFile(tr), ".json")+".hlog", b.Bytes())
}

// keepOther writes a start-up or job trial, counts it and prints its line;
// its error says when the trial was cut short. Every backend's start-up
// and job trials are kept here.
func (r *runner) keepOther(tr *record.Trial) error {
	if err := r.dir.WriteTrial(tr); err != nil {
		return err
	}
	r.mu.Lock()
	r.trials[tr.Index] = tr
	r.mu.Unlock()
	what := "start"
	if jr := tr.Job; jr != nil {
		what = "job"
		r.finishedOther(tr, fmt.Sprintf("wall %8.3f s  CPU %7.3f s", jr.WallS, jr.UserS+jr.SystemS), jr.Failed, jr.Error)
	} else if su := tr.Startup; su != nil {
		var line string
		for _, ss := range su.Services {
			if ss.Measured {
				line += fmt.Sprintf("  %s ready %.3f s CPU %.2f s", ss.Name, ss.ReadyS, ss.CPUS)
			}
		}
		r.finishedOther(tr, strings.TrimSpace(line), su.Failed, su.Error)
	}
	if tr.Interrupted {
		return fmt.Errorf("%w: %s %d (%s) cut short", ErrInterrupted, what, tr.Index, tr.Variant)
	}
	return nil
}

// endTelemetryCycle ends the telemetry cycle of variant name's last trial
// now that its services have stopped: what they flushed as they stopped
// counts for it, and what they will send when next started does not. The
// trial's file is written again with the count.
func (r *runner) endTelemetryCycle(name string, counts backend.SinkCounts) error {
	r.mu.Lock()
	tr := r.lastTrial[name]
	delete(r.lastTrial, name)
	r.mu.Unlock()
	if tr == nil || len(tr.Telemetry) == 0 {
		return nil
	}
	end, at, err := counts(context.Background())
	if err != nil {
		r.note(fmt.Sprintf("variant %s: the telemetry its services sent as they stopped is not counted: %v", name, err))
		return nil
	}
	end.T = at.Sub(tr.MeasureStart).Seconds()
	tr.TelemetryEnd = &end
	if err := r.dir.WriteTrial(tr); err != nil {
		return fmt.Errorf("variant %s: record its telemetry after stopping: %w", name, err)
	}
	return nil
}

// keptTrials returns the trial records the results directory holds, in the
// order they ran, as the report reads them.
func (r *runner) keptTrials() []*record.Trial {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.SortedFunc(maps.Values(r.trials), func(a, b *record.Trial) int { return cmp.Compare(a.Index, b.Index) })
}
