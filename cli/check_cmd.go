package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/report"
	"github.com/tollperf/toll/run"
	"github.com/tollperf/toll/scenario"
)

func newCheckCmd() *cobra.Command {
	var startup bool
	var vars []string
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Validate a scenario and print its plan and expected duration, starting nothing",
		Long: `Validate a scenario as toll run does before it starts anything (every field
against toll's bounds and this machine, and the programs it would start), then
print the plan: variants, load steps, rounds, the order of the actions and how
long the run is expected to take. Nothing is started. An invalid scenario exits
2 with file:line: field: what is wrong.`,
		Example: `  toll check examples/quickstart.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			own, err := parseLabels(vars)
			if err != nil {
				return &exitError{ExitUsage, fmt.Errorf("--set: %w", err)}
			}
			s, err := checkScenario(args[0], startup, own)
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			return describePlan(cmd.OutOrStdout(), s, plan.New(s, s.Seed))
		},
	}
	cmd.Flags().BoolVar(&startup, "startup", false, "check the scenario as toll run --startup reads it (its start-up experiment)")
	cmd.Flags().StringArrayVar(&vars, "set", nil, "fill in the scenario's placeholder ${KEY} with VALUE, KEY=VALUE (repeatable), as toll run --set does")
	return cmd
}

// checkScenario reads and validates the scenario in file as toll run does
// before it starts anything, programs included, and returns it with the
// variants run adds (an A/A control).
// vars fill in the file's own placeholders (--set).
func checkScenario(file string, startup bool, vars map[string]string) (*scenario.Scenario, error) {
	read := func(file string) (*scenario.Scenario, error) {
		return scenario.ReadWith(file, scenario.Overrides{Vars: vars})
	}
	if startup {
		if len(vars) > 0 {
			return nil, errors.New("--set and --startup: a start-up experiment reads the file as it is")
		}
		read = scenario.ReadStartup
	}
	s, err := read(file)
	if err != nil {
		return nil, err
	}
	s = run.ControlScenario(s)
	if s.Kubernetes == nil {
		if err := s.CheckPrograms(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// planSize counts what a plan does.
type planSize struct {
	starts, stops, trials, atOnce int
	// loaded is the load the plan sends, warm-ups included, for a load
	// test; 0 for other workloads.
	loaded time.Duration
}

// sizeOf counts the actions of p, a plan of s, and the load they send: a
// trial's warm-up and window (each side's in turn for a sliced duet), and
// the variant warm-up after each start.
func sizeOf(s *scenario.Scenario, p *plan.Plan) planSize {
	var n planSize
	for _, a := range p.Actions {
		switch a.Kind {
		case plan.Start:
			n.starts++
			n.loaded += time.Duration(s.Load.VariantWarmup)
		case plan.Stop:
			n.stops++
		case plan.Run:
			n.trials++
			n.loaded += a.Load(s)
		case plan.RunAtOnce:
			n.atOnce++
			n.trials += len(a.Sides)
			n.loaded += a.Load(s)
		}
	}
	if s.Workload() != scenario.WorkloadLoad {
		n.loaded = 0
	}
	return n
}

// precisionTargets says what a run of s in precision mode aims at, within
// what budget: "±3% on cpu_per_request_ms within 25m0s".
func precisionTargets(s *scenario.Scenario) string {
	t := s.Precision.Targets()
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(t)) {
		parts = append(parts, fmt.Sprintf("±%g%% on %s", t[c], c))
	}
	return fmt.Sprintf("%s within %s", strings.Join(parts, ", "), s.Precision.Budget.D())
}

// describePlan prints what a run of s would do (p, its plan).
func describePlan(w io.Writer, s *scenario.Scenario, p *plan.Plan) error {
	var variants []string
	for _, v := range s.Variants {
		variants = append(variants, v.Name)
	}
	var steps []string
	for _, st := range s.Steps() {
		steps = append(steps, st.String())
	}
	n := sizeOf(s, p)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: valid\n", s.Path)
	fmt.Fprintf(&b, "  scenario   %s (workload %s)\n", s.Name, s.Workload())
	fmt.Fprintf(&b, "  variants   %s (baseline %s)\n", strings.Join(variants, ", "), s.Baseline)
	fmt.Fprintf(&b, "  steps      %s\n", strings.Join(steps, "; "))
	unit := "rounds"
	if s.Workload() != scenario.WorkloadLoad {
		unit = "repetitions"
	}
	if s.Precision.On {
		// The plan holds a ceiling of rounds that the stopping rule ends
		// long before: say what ends the run instead.
		fmt.Fprintf(&b, "  %-10s until %s (at least %d), restart %s", unit, precisionTargets(s), s.Precision.MinRounds, s.Restart)
	} else {
		fmt.Fprintf(&b, "  %-10s %d, restart %s", unit, s.Repetitions(), s.Restart)
	}
	if s.Mode != "" {
		fmt.Fprintf(&b, ", mode %s", s.Mode)
	}
	b.WriteString("\n")
	if c := run.ChosenSchedule(s); c != nil {
		line := report.ScheduleText(c, s.Restart, time.Duration(s.Load.Warmup), "")
		switch {
		case line == "":
		case c.Unchosen != "":
			fmt.Fprintf(&b, "  schedule   %s\n", strings.TrimPrefix(line, "schedule "))
		default:
			fmt.Fprintf(&b, "  chosen     %s\n", strings.TrimPrefix(line, "schedule chosen by toll: "))
		}
	}
	if s.Workload() == scenario.WorkloadLoad {
		fmt.Fprintf(&b, "  each trial %s warm-up + %s measured", time.Duration(s.Load.Warmup), time.Duration(s.Load.Duration))
		switch {
		case s.Load.VariantWarmupAuto:
			rate := ""
			if times := s.Load.JVMWarmupRateTimes(); times > 0 {
				rate = fmt.Sprintf(", then at %g times the trial's rate", times)
			}
			fmt.Fprintf(&b, "; after each start, a variant warm-up chosen by toll: a JVM by %d users%s, then at the trial's load, until its JIT settles (at most %s), other runtimes %s",
				scenario.DefaultJVMWarmupUsers, rate, time.Duration(s.Load.VariantWarmup), scenario.DefaultNoJVMWarmup)
			if s.Pinning.WarmupAuto {
				b.WriteString(", on every CPU at idle priority")
			}
		case s.Load.VariantWarmup > 0:
			fmt.Fprintf(&b, "; %s variant warm-up after each start", time.Duration(s.Load.VariantWarmup))
		}
		b.WriteString("\n")
	}
	if s.Precision.On {
		b.WriteString("  actions    up to ")
	} else {
		b.WriteString("  actions    ")
	}
	fmt.Fprintf(&b, "%d trials", n.trials)
	if n.atOnce > 0 {
		fmt.Fprintf(&b, " (in %d runs side by side)", n.atOnce)
	}
	fmt.Fprintf(&b, ", %d starts, %d stops; variants in a random order each round", n.starts, n.stops)
	if s.Seed != 0 {
		fmt.Fprintf(&b, " (seed %d)", s.Seed)
	} else {
		b.WriteString(" (seed drawn at run time)")
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  first      %s\n", firstActions(p, 8))
	switch {
	case s.Precision.On:
		fmt.Fprintf(&b, "  expected   at most %s (the budget); toll stops sooner when every primary cost reaches its target, and starts the services again as the precision needs\n",
			s.Precision.Budget.D())
	case n.loaded > 0:
		fmt.Fprintf(&b, "  expected   at least %s of load, plus the time %d starts of the services take\n", n.loaded.Round(time.Second), n.starts)
	case s.Workload() == scenario.WorkloadStartup:
		fmt.Fprintf(&b, "  expected   %d cold starts, each as long as the services take to be ready\n", n.trials)
	default:
		fmt.Fprintf(&b, "  expected   %d runs of the job, each as long as it takes\n", n.trials)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// firstActions summarises the first max actions of p: "start baseline,
// start otel, run otel 300 req/s, …".
func firstActions(p *plan.Plan, max int) string {
	var out []string
	for i, a := range p.Actions {
		if i == max {
			out = append(out, fmt.Sprintf("… (%d more)", len(p.Actions)-max))
			break
		}
		switch a.Kind {
		case plan.Run:
			out = append(out, fmt.Sprintf("run %s r%d", a.Variant, a.Trial.Round))
		case plan.RunAtOnce:
			var vs []string
			for _, t := range a.Sides {
				vs = append(vs, t.Variant)
			}
			out = append(out, fmt.Sprintf("run %s at once r%d", strings.Join(vs, "+"), a.Sides[0].Round))
		default:
			out = append(out, fmt.Sprintf("%s %s", a.Kind, a.Variant))
		}
	}
	return strings.Join(out, ", ")
}
