package run

import (
	"fmt"
	"time"

	"github.com/tollperf/toll/local"
)

// localHooks are what the local backend tells the run: its notes, its lines
// of progress, when each trial's measurement begins, each second of a
// trial for the live status line, the budget its variant warm-ups are
// spent from, and the end of a variant's telemetry cycle.
func (r *runner) localHooks() local.Hooks {
	h := local.Hooks{Note: r.note, Say: r.say, Began: r.beginProgress, WarmupBudget: warmupBudget{r},
		Stopped: r.endTelemetryCycle}
	if r.opt.Live {
		h.Live = r.status
	}
	return h
}

// say prints a line of progress between the trials' lines.
func (r *runner) say(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.opt.Progress, line)
}

// warmupBudget bounds the variant warm-ups of a run in precision mode by
// what is left of its budget, and counts their time apart from the
// rounds'; in other runs it bounds nothing.
type warmupBudget struct{ r *runner }

// Cap returns the longest a variant warm-up may take now.
func (w warmupBudget) Cap() (time.Duration, bool) {
	if w.r.prec == nil {
		return 0, false
	}
	return w.r.prec.warmupCap(), true
}

// Spent counts a variant warm-up that took d.
func (w warmupBudget) Spent(d time.Duration) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	w.r.prec.warmed(d)
}
