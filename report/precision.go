package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollperf/toll/analyze"
	"github.com/tollperf/toll/record"
)

// precisionLines says, one line per load step, how a run in precision mode
// ended: "reached ±3% after 14 rounds over 3 starts, 11 min", or "budget
// spent: otel at ±4.2%; about 2 more starts (≈ 8 min) would reach ±3%".
// Nothing for a run with a fixed number of rounds.
func precisionLines(s *analyze.Summary) []string {
	p := s.Manifest.Precision
	if p == nil {
		return nil
	}
	var out []string
	for _, st := range p.Steps {
		line := precisionLine(st, p.Targets, p.MinStarts)
		if len(s.Steps) > 1 {
			for _, x := range s.Steps {
				if x.Index == st.Step {
					line = x.Label() + ": " + line
				}
			}
		}
		out = append(out, line)
	}
	if line := measuredLine(s); line != "" {
		out = append(out, line)
	}
	return out
}

// precisionLine is one step's line; targets are the run's, by cost, which
// a step that reached them all names when there are several, and a step
// whose budget ran out before minStarts starts (precision.min_starts) says
// so.
func precisionLine(st record.PrecisionStep, targets map[string]float64, minStarts int) string {
	over := ""
	if st.Starts > 1 {
		over = fmt.Sprintf(" over %d starts", st.Starts)
	}
	if st.Stop == "budget" && st.Starts > 0 && st.Starts < minStarts {
		over = fmt.Sprintf(" over %s, fewer than the %d of precision.min_starts", plural(st.Starts, "start"), minStarts)
	}
	took := minutes(st.ElapsedS)
	if st.TakenUp {
		took += " (taken up again once the other load steps had run, with what they left of the budget)"
	}
	label := costLabel(st.Cost)
	switch st.Stop {
	case "reached":
		return fmt.Sprintf("reached %s after %d rounds%s, %s", targetsReached(st.TargetPct, targets), st.Rounds, over, took)
	case "budget":
		var more []string
		if st.MoreStarts > 0 {
			more = append(more, plural(st.MoreStarts, "more start"))
		}
		if st.MoreRounds > 0 {
			more = append(more, plural(st.MoreRounds, "more round"))
		}
		at := "no interval yet"
		if st.HalfPct > 0 {
			at = fmt.Sprintf("at ±%.1f%%", st.HalfPct)
		}
		line := fmt.Sprintf("budget spent after %d rounds%s, %s: %s %s %s", st.Rounds, over, took, st.Variant, label, at)
		if st.HalfPct > 0 && st.StartHalfPct >= st.HalfPct/2 {
			line += fmt.Sprintf(", of which ±%.1f%% is what differs between starts (only more starts narrow it)", st.StartHalfPct)
		}
		switch {
		case st.MoreRounds < 0:
			line += fmt.Sprintf("; ±%g%% is out of reach at this spread (more than %d times the budget)", st.TargetPct, analyze.OutOfReach)
		case len(more) > 0:
			line += fmt.Sprintf("; about %s (≈ %s) would reach ±%g%%", strings.Join(more, " and "), minutes(st.MoreS), st.TargetPct)
		}
		return line + heldText(st.Held, targets)
	}
	if st.Stop == "idle" {
		return fmt.Sprintf("%d rounds%s, %s: no request for a per-request target to aim at; the minimum rounds measured what the variants cost without load", st.Rounds, over, took)
	}
	if st.Stop == "ceded" {
		why := fmt.Sprintf("±%g%% is out of reach at this spread", st.TargetPct)
		if st.MoreS > 0 {
			why = fmt.Sprintf("±%g%% would take about %s more, beyond what was left of the budget", st.TargetPct, minutes(st.MoreS))
		}
		return fmt.Sprintf("stopped after %d rounds%s, %s: %s %s at ±%.1f%%; %s, so its share of the budget went to the other load steps",
			st.Rounds, over, took, st.Variant, label, st.HalfPct, why)
	}
	return fmt.Sprintf("stopped after %d rounds%s, %s, before reaching ±%g%% (%s %s at ±%.1f%%)", st.Rounds, over, took, st.TargetPct, st.Variant, label, st.HalfPct)
}

// heldText says which targets a step that stopped short met, and since
// when: "; ±3% on CPU per request without JIT met from round 52 (9 min)
// on"; "" for none.
func heldText(held []record.TargetHeld, targets map[string]float64) string {
	var parts []string
	for _, h := range held {
		parts = append(parts, fmt.Sprintf("±%g%% on %s met from round %d (%s) on", targets[h.Cost], costLabel(h.Cost), h.Round, minutes(h.ElapsedS)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}

// targetsReached writes what a step reached: "±3%" for one target, or
// every target with its cost, "±3% on CPU per request and ±10% on latency
// mean", in the costs' order.
func targetsReached(pct float64, targets map[string]float64) string {
	if len(targets) < 2 {
		return fmt.Sprintf("±%g%%", pct)
	}
	costs := make([]string, 0, len(targets))
	for c := range targets {
		costs = append(costs, c)
	}
	slices.Sort(costs)
	parts := make([]string, len(costs))
	for i, c := range costs {
		parts[i] = fmt.Sprintf("±%g%% on %s", targets[c], costLabel(c))
	}
	return strings.Join(parts, " and ")
}

// costLabel is cost c's label in words ("CPU per request"), or its name
// where it has none.
func costLabel(c string) string {
	if info := analyze.Info(analyze.Cost(c)); info.Label != "" {
		return info.Label
	}
	return c
}

// minutes writes seconds as "11 min", or "40 s" under a minute.
func minutes(s float64) string {
	if s < 60 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.0f min", math.Round(s/60))
}

// scheduleLine says what toll chose of the run's schedule and why, from
// the manifest's codes ("" when the scenario named it all).
func scheduleLine(m *record.Manifest) string {
	cpus := ""
	if len(m.Layout.DuetCPUs) > 0 {
		cpus = m.Layout.DuetCPUs[0]
	}
	return ScheduleText(m.Chosen, m.Restart, time.Duration(m.Load.WarmupS*float64(time.Second)), cpus)
}

// ScheduleText says what toll chose of a schedule (c, nil for nothing)
// and why: "schedule chosen by toll: …", the sides at once on CPUs cpus
// when known, the warm-up before each window as restart (the run's
// policy) warms the services; or why it chose none of a schedule the
// scenario left open.
func ScheduleText(c *record.ScheduleChoice, restart string, warmup time.Duration, cpus string) string {
	if c == nil {
		return ""
	}
	if c.Unchosen == "rounds" {
		return "schedule as the scenario's defaults give it, one variant at a time: the scenario fixes its rounds, and toll chooses the schedule only when it chooses the rounds too; without rounds:, it would load pairs at once where the machine allows (a shared duet resolves a CPU cost several times faster)"
	}
	var parts []string
	if c.Mode {
		on := ""
		if cpus != "" {
			on = " on CPUs " + cpus
		}
		switch c.ModeWhy {
		case "duet":
			parts = append(parts, "the baseline and each variant loaded at once"+on+" (a shared duet), so that both meet the same moments of every CPU, one variant at a time if the first rounds keep those CPUs saturated; their latencies then do not compare (--sequential, or a latency among precision.costs, loads one variant at a time)")
		case "together":
			parts = append(parts, "the baseline and every variant loaded at once"+on+" (mode: together), so that every side meets the same moments of every CPU and a round holds one trial of each in the time of one duet, fewer at once if the first rounds keep those CPUs saturated; their latencies then do not compare (mode: duet pairs them one variant at a time; --sequential, or a latency among precision.costs, loads one variant at a time)")
		case "together-busy":
			parts = append(parts, fmt.Sprintf("the baseline and each variant loaded at once"+on+" (a shared duet): every variant at once kept those CPUs %.0f%% busy in one of the first rounds, where the sides queued behind one another, so the trials until then are set aside (trials/aside/together) and the rounds begin again in pairs; their latencies do not compare (--sequential loads one variant at a time)", c.BusyPct))
		case "busy":
			parts = append(parts, fmt.Sprintf("one variant at a time: sides loaded at once kept the services' CPUs %.0f%% busy in one of the first rounds, where they queued behind one another, and a pair would too; the trials until then are set aside (trials/aside)", c.BusyPct))
		default:
			parts = append(parts, "one variant at a time: "+oneAtATimeWhy(c.ModeWhy))
		}
	}
	if c.Restart {
		switch c.RestartWhy {
		case "no-jvm":
			parts = append(parts, "the services started afresh every round (restart: per-round): no service runs a JVM, so a start is cheap, and what differs between two starts (memory, threads) is then inside the intervals")
		case "jvm":
			parts = append(parts, "the services started once per start (restart: once), as many starts as the target needs: a JVM takes minutes to settle, and what differs between its starts is carried by the intervals of costs that vary with the start")
		case "image":
			parts = append(parts, "the services started once per start (restart: once): they run as containers")
		}
	}
	if c.StepsShareStarts {
		parts = append(parts, "every load step in each round, under the same start of the services, so that each start serves them all: a start costs its warm-up, and what differs between starts narrows only with more of them")
	}
	if c.Warmup {
		why := "the services are warm already from their variant warm-up"
		if restart != "once" {
			why = "a service started afresh settles in a second or two"
		}
		parts = append(parts, fmt.Sprintf("%s of load before each window (%s; load.warmup sets another)", warmup, why))
	}
	if len(parts) == 0 {
		return ""
	}
	return "schedule chosen by toll: " + strings.Join(parts, "; ")
}

// oneAtATimeWhy says why toll kept one variant at a time.
func oneAtATimeWhy(code string) string {
	switch code {
	case "one-variant":
		return "there is one variant"
	case "latency-primary":
		return "a primary cost is a latency or the throughput, which sides loaded at once do not compare"
	case "pinning-off":
		return "pinning.off is set, and sides at once need their CPUs pinned"
	case "one-cpu":
		return "this machine has one CPU, which the load generator would share with both sides"
	case "matrix":
		return "the scenario's matrix starts every variant under each CPU limit"
	case "connections":
		return "two load generators' connections would not fit this machine's local ports or file descriptors"
	case "cluster":
		return "a cluster runs one variant at a time"
	case "find-max":
		return "a --find-max search runs its own rounds"
	}
	return code
}

// measuredLine says how much of the run its measured windows held ("" for
// none): "measured 6.9 of 10.0 min (69%); starts, warm-ups and each
// trial's warm-up load took the rest".
func measuredLine(s *analyze.Summary) string {
	ms := s.Measured
	if ms == nil || s.Manifest == nil || s.Manifest.Precision == nil {
		return ""
	}
	unit, div := "min", 60.0
	if ms.ElapsedS < 120 {
		unit, div = "s", 1
	}
	counted := ""
	if ms.CountedS > 0 {
		counted = fmt.Sprintf(", %.1f %s of them counted (the rest while starts settled)", ms.CountedS/div, unit)
	}
	return fmt.Sprintf("measured %.1f of %.1f %s (%.0f%%) in windows%s; starts, warm-ups and each trial's warm-up load took the rest",
		ms.WindowS/div, ms.ElapsedS/div, unit, 100*ms.Share(), counted)
}

// stepLabels returns the label of each of s's load steps, by its index.
func stepLabels(s *analyze.Summary) map[int]string {
	labels := map[int]string{}
	for _, st := range s.Steps {
		labels[st.Index] = st.Label()
	}
	return labels
}

// warmupStartsLine says which rounds the comparisons left out because a
// warm-up of starts ahead of their turn began its load with them ("" for
// none): "rounds left out as a start ahead of its turn began its warm-up
// beside them: 2, 6, 10".
func warmupStartsLine(s *analyze.Summary) string {
	if len(s.WarmupStarts) == 0 {
		return ""
	}
	labels := stepLabels(s)
	var parts []string
	for _, sr := range s.WarmupStarts {
		rs := make([]string, len(sr.Rounds))
		for i, r := range sr.Rounds {
			rs[i] = strconv.Itoa(r)
		}
		part := strings.Join(rs, ", ")
		if len(s.WarmupStarts) > 1 || len(s.Steps) > 1 {
			part = labels[sr.Step] + ": " + part
		}
		parts = append(parts, part)
	}
	return "rounds left out as a start ahead of its turn began its warm-up beside them (its first seconds fall on one trial of the round more than the other): " + strings.Join(parts, "; ")
}

// settlingLine says which starts' leading rounds the comparisons left out
// while the starts settled ("" for none): "rounds left out while a start
// settled (over them → over the start's rounds counted): start 1 baseline
// 20 of 47 (its compilers' CPU 9.1 → 0.8 ms/s), otel 10 of 27 (CPU per
// request without JIT +22.8% → +19.9% against the baseline); start 2 …".
func settlingLine(s *analyze.Summary) string {
	if len(s.Settling) == 0 {
		return ""
	}
	labels := stepLabels(s)
	var groups []string
	var parts []string
	flush := func(st analyze.Settling) {
		head := fmt.Sprintf("start %d", st.Launch+1)
		if len(s.Steps) > 1 {
			head = labels[st.Step] + ", " + head
		}
		groups = append(groups, head+" "+strings.Join(parts, ", "))
		parts = nil
	}
	for i, st := range s.Settling {
		name := st.Variant
		if st.Pair != "" {
			name += " beside " + st.Pair
		}
		what := fmt.Sprintf("its compilers' CPU %.1f → %.1f ms/s", st.JITBefore, st.JITAfter)
		if st.AgainstStart > 0 {
			what += fmt.Sprintf(", where start %d's settled to %.1f", st.AgainstStart, st.AgainstJIT)
		}
		if st.Cost != "" {
			what = fmt.Sprintf("%s %+.1f%% → %+.1f%% against the baseline", costLabel(string(st.Cost)), st.ChangeBefore, st.ChangeAfter)
		}
		parts = append(parts, fmt.Sprintf("%s %d of %d (%s)", name, len(st.Rounds), st.Of, what))
		if i == len(s.Settling)-1 || s.Settling[i+1].Step != st.Step || s.Settling[i+1].Launch != st.Launch {
			flush(st)
		}
	}
	return "rounds left out while a start settled (over them → over the start's rounds counted): " + strings.Join(groups, "; ")
}
