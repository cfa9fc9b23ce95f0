package scenario

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Schedule records what toll chose of a load test's schedule in precision
// mode, where the scenario names no mode or no restart policy: every
// variant at once, or pairs at once (a shared duet) with one other
// variant, where the machine and the primary costs allow, and fresh
// services every round where starting them is cheap.
type Schedule struct {
	// ModeAuto is set when toll chose Mode; ModeWhy then says why it
	// chose it, or why it kept one variant at a time (a ScheduleReason).
	ModeAuto bool
	ModeWhy  string
	// RestartAuto is set when toll chose Restart; RestartWhy says why.
	RestartAuto bool
	RestartWhy  string
	// WarmupAuto is set when toll chose load.warmup (ChosenWarmup).
	WarmupAuto bool
	// Unchosen says why toll chose none of a load test's schedule that
	// names no mode (ScheduleFixedRounds); empty otherwise.
	Unchosen string
}

// ChosenWarmup and ChosenWarmupWarmed are the warm-up load before each
// measured window that toll chooses in precision mode where the scenario
// names none: 2 s for services started every round (a service with no JVM,
// which settles in a second or two after its start), half a second for
// services started once, warm already from their variant warm-up, which
// sit idle a fraction of a second between rounds and only have to come
// back from it (the JVMs of bench/jvm3.yaml, after a second of it, read
// the same CPU per request in their window's first second as in its
// last, within 2%, alike for every side). Every second of it is a second
// not measured: with 10 s windows, half a second more of each round.
const (
	ChosenWarmup       = 2 * time.Second
	ChosenWarmupWarmed = 500 * time.Millisecond
)

// Why toll chose a schedule (Schedule.ModeWhy and RestartWhy). The words
// are the report's; these are codes.
const (
	// ScheduleDuet: pairs at once on shared CPUs, so that both sides of a
	// comparison meet the same moments of every CPU.
	ScheduleDuet = "duet"
	// ScheduleTogether: the baseline and every variant at once on shared
	// CPUs (mode: together): every side meets the same moments of every
	// CPU, and a round holds one trial of each variant in the time a duet
	// holds one pair.
	ScheduleTogether = "together"
	// ScheduleOneVariant: nothing to pair.
	ScheduleOneVariant = "one-variant"
	// ScheduleLatency: a primary cost is a latency or the throughput,
	// which sides loaded at once do not compare.
	ScheduleLatency = "latency-primary"
	// ScheduleNoPinning: pinning.off, and a duet needs pinning.
	ScheduleNoPinning = "pinning-off"
	// ScheduleOneCPU: one CPU, which the load generator and every side
	// would share.
	ScheduleOneCPU = "one-cpu"
	// ScheduleMatrix: a matrix of CPU limits, which runs each variant
	// under each limit.
	ScheduleMatrix = "matrix"
	// ScheduleConnections: two load generators' connections would not fit
	// the machine's local ports or file descriptors.
	ScheduleConnections = "connections"
	// ScheduleCluster: a cluster runs one variant at a time.
	ScheduleCluster = "cluster"
	// ScheduleFindMax: a --find-max search runs its own rounds.
	ScheduleFindMax = "find-max"
	// ScheduleTogetherBusy: pairs at once (a shared duet), where every
	// variant at once kept the CPUs they shared saturated through the
	// run's first rounds (Lighten).
	ScheduleTogetherBusy = "together-busy"
	// ScheduleBusy: one variant at a time, where sides loaded at once kept
	// the CPUs they shared saturated through one of the run's first rounds, and a
	// pair would too (Lighten).
	ScheduleBusy = "busy"
	// ScheduleFixedRounds: the scenario fixes its rounds, and toll chooses
	// a schedule only with the rounds (precision mode): it keeps one
	// variant at a time (Schedule.Unchosen).
	ScheduleFixedRounds = "rounds"

	// RestartNoJVM: no service runs a JVM, so starting is cheap, and
	// starting every round puts what differs between two starts (memory
	// layout, heap sizing, threads) inside the intervals.
	RestartNoJVM = "no-jvm"
	// RestartJVM: a service may run a JVM, whose start and warm-up take
	// minutes: started once, a few times over the run.
	RestartJVM = "jvm"
	// RestartImage: a service runs as a container, whose start toll does
	// not time in advance: started once, a few times over the run.
	RestartImage = "image"
)

// schedule chooses the mode and the restart policy of a load test in
// precision mode that names neither (Schedule). Run on a duet-capable
// machine, a shared duet pairs the baseline and each variant at the same
// moments of the same CPUs, which resolves a CPU cost several times faster
// than alternating trials (docs/method.md, "Sharing one CPU"). With two
// variants or more besides the baseline, it loads them all at once
// (mode: together): a duet a round per variant would measure each side
// in turn, and the baseline once per duet, where one trial of each holds
// the same comparisons in the time of one duet. Where it cannot, the run
// keeps one variant at a time and says why.
func (v *validator) schedule(s *Scenario) {
	if s.Workload() != WorkloadLoad || v.asStartup {
		return
	}
	if v.present("rounds") && !v.present("precision") {
		if !v.present("mode") && !v.present("load.slice") {
			s.Schedule.Unchosen = ScheduleFixedRounds
		}
		return
	}
	if !v.present("restart") && !v.present("starts") {
		s.Schedule.RestartAuto = true
		switch {
		case hasImage(s):
			s.Schedule.RestartWhy = RestartImage
		case s.mayRunJVM():
			s.Schedule.RestartWhy = RestartJVM
		default:
			s.Restart, s.Schedule.RestartWhy = RestartPerRound, RestartNoJVM
		}
	}
	if !v.present("load.warmup") {
		w := ChosenWarmup
		if s.Restart == RestartOnce {
			w = ChosenWarmupWarmed
		}
		// A closed model's ramp, where it is one toll takes, is warm-up.
		if r := s.Load.Ramp.D(); r > w && r <= time.Hour { // a longer one is refused below
			w = r
		}
		s.Load.Warmup, s.Schedule.WarmupAuto = Duration(w), true
	}
	if v.present("mode") || v.present("load.slice") {
		return
	}
	s.Schedule.ModeAuto = true
	// One variant is no reason here: an A/A run (toll run --aa) adds its
	// twin after validation, and the run keeps a lone variant on its own
	// (KeepOneAtATime).
	switch {
	case slices.ContainsFunc(s.Precision.Costs, func(c PrecisionCost) bool {
		return strings.HasPrefix(c.Cost, "latency_") || c.Cost == "throughput"
	}):
		s.Schedule.ModeWhy = ScheduleLatency
	case s.Pinning.Off:
		s.Schedule.ModeWhy = ScheduleNoPinning
	case len(v.m.online) > 0 && len(v.m.online) < 2:
		s.Schedule.ModeWhy = ScheduleOneCPU
	case v.present("matrix"):
		s.Schedule.ModeWhy = ScheduleMatrix
	case !v.generatorsFit(s.Load, 2):
		s.Schedule.ModeWhy = ScheduleConnections
	case len(s.Variants) > 2 && v.generatorsFit(s.Load, len(s.Variants)):
		s.Mode, s.Pinning.Duet, s.Schedule.ModeWhy = ModeTogether, DuetShared, ScheduleTogether
	default:
		s.Mode, s.Pinning.Duet, s.Schedule.ModeWhy = ModeDuet, DuetShared, ScheduleDuet
	}
}

// generatorsFit reports whether the connections of n load generators of l,
// one a side, fit this machine (a load that does not fit even one is then
// refused for one, by load).
func (v *validator) generatorsFit(l Load, n int) bool {
	conns, fds, what := l.MaxConns, 1, "connections"
	if conns <= 0 {
		conns = DefaultMaxConns
	}
	if len(l.Users) > 0 {
		conns, fds, what = slices.Max(l.Users), 2, "users"
	}
	return checkConns(v.m, conns, n, fds, what) == nil
}

// ChoseConcurrent reports whether toll chose to load sides at once (a
// shared duet, or every variant together) where the scenario named no
// mode.
func (s *Scenario) ChoseConcurrent() bool {
	return s.Schedule.ModeAuto && s.Concurrent()
}

// KeepOneAtATime undoes sides at once that toll chose (Schedule.ModeAuto)
// where the run cannot hold them: the variants run one at a time, and why
// says why (a ScheduleReason). A mode the scenario names is left alone.
func (s *Scenario) KeepOneAtATime(why string) {
	if !s.ChoseConcurrent() {
		return
	}
	s.Mode, s.Pinning.Duet, s.Schedule.ModeWhy = ModeSequential, "", why
}

// Lighten loads fewer sides at once than toll chose (Schedule.ModeAuto),
// once a round has shown that the CPUs they share cannot hold them all:
// pairs at once (ModeDuet) or one variant at a time (ModeSequential). A
// mode the scenario names is left alone.
func (s *Scenario) Lighten(mode string) {
	if !s.ChoseConcurrent() {
		return
	}
	switch mode {
	case ModeDuet:
		s.Mode, s.Schedule.ModeWhy = ModeDuet, ScheduleTogetherBusy
	case ModeSequential:
		s.KeepOneAtATime(ScheduleBusy)
	}
}

// reJVM finds a JVM in a command, its environment or a script it runs.
var reJVM = regexp.MustCompile(`(?i)\bjava\b|\.jar\b|-javaagent|JAVA_TOOL_OPTIONS|JDK_JAVA_OPTIONS|_JAVA_OPTIONS|\bkotlin\b|\bscala\b|\bclojure\b|\bgradle\b|\bmvn\b`)

// mayRunJVM reports whether a service of s, as any variant changes it,
// may run a JVM: its command, arguments or environment name one, or a
// script it runs (its program or an argument that is a file) does. A JVM
// starts in seconds and settles in minutes, so toll starts it once (a few
// times over the run) rather than every round; a false alarm costs only
// that choice.
func (s *Scenario) mayRunJVM() bool {
	mentions := func(dir string, argv []string, envs ...map[string]string) bool {
		for _, env := range envs {
			for k, val := range env {
				if reJVM.MatchString(k) || reJVM.MatchString(val) {
					return true
				}
			}
		}
		for i, a := range argv {
			if reJVM.MatchString(a) || scriptMentionsJVM(dir, a, i == 0) {
				return true
			}
		}
		return false
	}
	for _, svc := range s.Services {
		if mentions(svc.Dir, svc.Command, svc.Env) {
			return true
		}
		for _, vr := range s.Variants {
			if o, ok := vr.Services[svc.Name]; ok && mentions(svc.Dir, append(append([]string(nil), o.Command...), o.Args...), o.Env) {
				return true
			}
		}
	}
	return false
}

// maxScriptScan bounds how much of a script mayRunJVM reads.
const maxScriptScan = 64 << 10

// scriptMentionsJVM reports whether word names a regular text file
// (relative to dir; a program is looked up in PATH too) whose first
// maxScriptScan bytes name a JVM. A binary is not read: a program that
// is a JVM is named java.
func scriptMentionsJVM(dir, word string, program bool) bool {
	if word == "" || strings.Contains(word, "${") {
		return false
	}
	p := word
	switch {
	case filepath.IsAbs(p):
	case strings.Contains(p, "/") || !program:
		p = filepath.Join(dir, p)
	default:
		found := false
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if filepath.IsAbs(d) {
				if st, err := os.Stat(filepath.Join(d, word)); err == nil && st.Mode().IsRegular() {
					p, found = filepath.Join(d, word), true
					break
				}
			}
		}
		if !found {
			return false
		}
	}
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxScriptScan))
	if err != nil || slices.Contains(b[:min(len(b), 512)], 0) {
		return false // a binary
	}
	return reJVM.Match(b)
}
