package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/pin"
)

// TestScheduleChosen checks the schedule toll chooses for a load test in
// precision mode that names none, on a few shapes of scenario and machine:
// a shared duet where the machine and the primary costs allow, a start
// every round where no service runs a JVM, and one variant at a time or
// one start where they must, each with its reason.
func TestScheduleChosen(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec java -jar app.jar \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	oneCPU := testMachine
	oneCPU.online = pin.CPUs{0}
	for _, tt := range []struct {
		name                 string
		edit                 func(string) string
		m                    machine
		mode, duet, restart  string
		modeWhy, restartWhy  string
		modeAuto, restartAut bool
	}{
		{name: "a Go service", mode: ModeDuet, duet: DuetShared, restart: RestartPerRound, modeWhy: ScheduleDuet, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "a Go service, three variants", edit: threeVariants, mode: ModeTogether, duet: DuetShared, restart: RestartPerRound, modeWhy: ScheduleTogether, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "three JVM variants", edit: func(s string) string {
			return threeVariants(strings.Replace(s, "env: {A: b}", "env: {JAVA_TOOL_OPTIONS: -javaagent:/opt/a.jar}", 1))
		}, mode: ModeTogether, duet: DuetShared, restart: RestartOnce, modeWhy: ScheduleTogether, restartWhy: RestartJVM, modeAuto: true, restartAut: true},
		{name: "three variants whose users fit two load generators, not three", edit: func(s string) string {
			return threeVariants(strings.Replace(s, "  rate: 100\n", "  users: 4000\n", 1))
		}, mode: ModeDuet, duet: DuetShared, restart: RestartPerRound, modeWhy: ScheduleDuet, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "three variants, one CPU", edit: threeVariants, m: oneCPU, mode: ModeSequential, restart: RestartPerRound, modeWhy: ScheduleOneCPU, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "three variants and a latency among the primary costs", edit: func(s string) string {
			return threeVariants(s) + "precision: {costs: [cpu_per_request, latency_p99]}\n"
		}, mode: ModeSequential, restart: RestartPerRound, modeWhy: ScheduleLatency, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "an agent through JAVA_TOOL_OPTIONS", edit: func(s string) string {
			return strings.Replace(s, "env: {A: b}", "env: {JAVA_TOOL_OPTIONS: -javaagent:/opt/a.jar}", 1)
		}, mode: ModeDuet, duet: DuetShared, restart: RestartOnce, modeWhy: ScheduleDuet, restartWhy: RestartJVM, modeAuto: true, restartAut: true},
		{name: "a script that runs java", edit: func(s string) string {
			return strings.Replace(s, "command: [toll, app, consumer", "command: [sh, "+script+", consumer", 1)
		}, mode: ModeDuet, duet: DuetShared, restart: RestartOnce, modeWhy: ScheduleDuet, restartWhy: RestartJVM, modeAuto: true, restartAut: true},
		{name: "a latency among the primary costs", edit: func(s string) string {
			return s + "precision: {costs: [cpu_per_request, latency_p99]}\n"
		}, mode: ModeSequential, restart: RestartPerRound, modeWhy: ScheduleLatency, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "pinning off", edit: func(s string) string { return s + "pinning: {off: true}\n" },
			mode: ModeSequential, restart: RestartPerRound, modeWhy: ScheduleNoPinning, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "one CPU", m: oneCPU, mode: ModeSequential, restart: RestartPerRound, modeWhy: ScheduleOneCPU, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "a matrix", edit: func(s string) string { return s + "matrix: {cpus: [1, 2]}\n" },
			mode: ModeSequential, restart: RestartPerRound, modeWhy: ScheduleMatrix, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "users whose connections fit one load generator, not two", edit: func(s string) string {
			return strings.Replace(s, "  rate: 100\n", "  users: 9000\n", 1)
		}, mode: ModeSequential, restart: RestartPerRound, modeWhy: ScheduleConnections, restartWhy: RestartNoJVM, modeAuto: true, restartAut: true},
		{name: "the scenario's mode and restart", edit: func(s string) string { return s + "mode: sequential\nrestart: once\n" },
			mode: ModeSequential, restart: RestartOnce},
		{name: "fixed rounds", edit: func(s string) string { return s + "rounds: 5\n" }, mode: ModeSequential, restart: RestartOnce},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := good
			if tt.edit != nil {
				src = tt.edit(src)
			}
			m := tt.m
			if m.online == nil {
				m = testMachine
			}
			s, err := parse(filepath.Join(dir, "demo.yaml"), []byte(src), m)
			if err != nil {
				t.Fatal(err)
			}
			c := s.Schedule
			if s.Mode != tt.mode || s.Pinning.Duet != tt.duet || s.Restart != tt.restart {
				t.Errorf("mode %q (duet %q), restart %q; want %q (%q), %q", s.Mode, s.Pinning.Duet, s.Restart, tt.mode, tt.duet, tt.restart)
			}
			if c.ModeAuto != tt.modeAuto || c.ModeWhy != tt.modeWhy || c.RestartAuto != tt.restartAut || c.RestartWhy != tt.restartWhy {
				t.Errorf("chosen %+v; want mode %v %q, restart %v %q", c, tt.modeAuto, tt.modeWhy, tt.restartAut, tt.restartWhy)
			}
			// Only fixed rounds with no mode leave the schedule unchosen,
			// and say so.
			if want := map[bool]string{true: ScheduleFixedRounds}[tt.name == "fixed rounds"]; c.Unchosen != want {
				t.Errorf("unchosen %q, want %q", c.Unchosen, want)
			}
			// The warm-up before each window: toll's in precision mode,
			// shorter for services warm from their variant warm-up.
			warmup := DefaultWarmup
			switch {
			case tt.name == "fixed rounds":
			case s.Restart == RestartOnce:
				warmup = ChosenWarmupWarmed
			default:
				warmup = ChosenWarmup
			}
			if s.Load.Warmup.D() != warmup {
				t.Errorf("load.warmup %s, want %s", s.Load.Warmup, warmup)
			}
		})
	}
}

// threeVariants adds a third variant, a twin of the baseline, to a
// scenario whose variants end with the otel one.
func threeVariants(s string) string {
	return strings.Replace(s, "load:\n", "  - name: twin\nload:\n", 1)
}

// TestKeepOneAtATime checks that sides at once that toll chose (a duet, or
// every variant together), and only those, are undone where the run cannot
// hold them.
func TestKeepOneAtATime(t *testing.T) {
	s, err := parse("demo.yaml", []byte(good), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	s.KeepOneAtATime(ScheduleCluster)
	if s.Mode != ModeSequential || s.Pinning.Duet != "" || s.Schedule.ModeWhy != ScheduleCluster {
		t.Errorf("chosen duet kept: mode %q duet %q why %q", s.Mode, s.Pinning.Duet, s.Schedule.ModeWhy)
	}
	three, err := parse("demo.yaml", []byte(threeVariants(good)), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	three.KeepOneAtATime(ScheduleFindMax)
	if three.Mode != ModeSequential || three.Pinning.Duet != "" || three.Schedule.ModeWhy != ScheduleFindMax {
		t.Errorf("chosen together kept: mode %q duet %q why %q", three.Mode, three.Pinning.Duet, three.Schedule.ModeWhy)
	}
	named, err := parse("demo.yaml", []byte(good+"mode: duet\npinning: {duet: shared}\n"), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	named.KeepOneAtATime(ScheduleCluster)
	if named.Mode != ModeDuet {
		t.Errorf("the scenario's own duet undone: mode %q", named.Mode)
	}
}

// TestLighten checks that toll loads fewer sides at once only where it
// chose to load them at once: every variant together becomes pairs or one
// at a time, each saying why, and a mode the scenario names stays.
func TestLighten(t *testing.T) {
	for _, tt := range []struct {
		name, scenario, to string
		mode, duet, why    string
	}{
		{"together to pairs", threeVariants(good), ModeDuet, ModeDuet, DuetShared, ScheduleTogetherBusy},
		{"together to one at a time", threeVariants(good), ModeSequential, ModeSequential, "", ScheduleBusy},
		{"a chosen duet to one at a time", good, ModeSequential, ModeSequential, "", ScheduleBusy},
		{"the scenario's own together", threeVariants(good) + "mode: together\n", ModeDuet, ModeTogether, DuetShared, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse("demo.yaml", []byte(tt.scenario), testMachine)
			if err != nil {
				t.Fatal(err)
			}
			s.Lighten(tt.to)
			if s.Mode != tt.mode || s.Pinning.Duet != tt.duet || s.Schedule.ModeWhy != tt.why {
				t.Errorf("mode %q duet %q why %q, want %q %q %q", s.Mode, s.Pinning.Duet, s.Schedule.ModeWhy, tt.mode, tt.duet, tt.why)
			}
		})
	}
}
