package run

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
)

// ResumeError says why a results directory cannot be resumed: its run
// cannot be continued as asked (bad input, not a failure of the run).
type ResumeError struct{ Err error }

func (e *ResumeError) Error() string { return e.Err.Error() }
func (e *ResumeError) Unwrap() error { return e.Err }

// resumption is what an interrupted run left behind, and what is left to do.
type resumption struct {
	dir      *record.Dir
	manifest *record.Manifest
	// kept holds the indices of the trials that finished whole; a trial
	// cut short (interrupted, or ended by a service's exit) is run again.
	kept map[int]bool
	// nextLaunch is, by step, the start after the latest a kept trial ran
	// under: a resumed run starts its services again.
	nextLaunch map[int]int
	// trials are the records the directory holds, in the order they ran,
	// those cut short among them.
	trials []*record.Trial
	// scenario is the scenario as the run went on, where toll loaded
	// fewer sides at once than it first chose (lighten); nil otherwise.
	scenario *scenario.Scenario
}

// ReadResumable reads the scenario of the results directory path as its run
// read it: the copy the run kept, parsed as if from the original file (so
// services' relative directories resolve as they did), with the run's A/A
// twin restored. toll run --resume continues the run with it.
func ReadResumable(path string) (*scenario.Scenario, *record.Manifest, error) {
	dir, err := record.Open(path)
	if err != nil {
		return nil, nil, err
	}
	m, err := dir.ReadManifest()
	if err != nil {
		return nil, nil, err
	}
	data, err := dir.ReadFile("scenario.yaml")
	if err != nil {
		return nil, nil, fmt.Errorf("resume %s: %w", path, err)
	}
	file := m.ScenarioFile
	if file == "" {
		file = filepath.Join(dir.Path, "scenario.yaml")
	} else if !filepath.IsAbs(file) && m.WorkDir != "" {
		file = filepath.Join(m.WorkDir, file)
	}
	s, err := scenario.Parse(file, data)
	if err != nil {
		return nil, nil, fmt.Errorf("resume %s: its scenario.yaml: %w", path, err)
	}
	if m.AA {
		s = AAScenario(s)
	}
	if m.Control != "" {
		s.Control = true
		s = ControlScenario(s)
	}
	return s, m, nil
}

// AAScenario returns s with one variant besides the baseline: a copy of the
// baseline, so that the comparison measures nothing but noise.
func AAScenario(s *scenario.Scenario) *scenario.Scenario {
	c := *s
	base, _ := s.Variant(s.Baseline)
	twin := base
	twin.Name = s.Baseline + "-again"
	twin.Description = "the baseline again (A/A run)"
	c.Variants = []scenario.Variant{base, twin}
	c.Name = s.Name + "-aa"
	c.Control = false // the run is an A/A run already
	return &c
}

// openResumption opens the results directory of an interrupted run of s and
// finds the trials it finished. It refuses a directory whose run was not of
// s as it is now: the plan, rebuilt from the seed, must name the same trials.
func openResumption(s *scenario.Scenario, path string) (*resumption, error) {
	res, err := readResumption(s, path)
	if err != nil {
		return nil, &ResumeError{err}
	}
	return res, nil
}

func readResumption(s *scenario.Scenario, path string) (*resumption, error) {
	dir, err := record.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := dir.ReadManifest()
	if err != nil {
		return nil, err
	}
	if m.Mode == "find-max" {
		return nil, fmt.Errorf("resume %s: a --find-max search cannot be resumed; run it again", path)
	}
	var lighter *scenario.Scenario
	if c := m.Chosen; c != nil && (c.ModeWhy == scenario.ScheduleTogetherBusy || c.ModeWhy == scenario.ScheduleBusy) && s.ChoseConcurrent() {
		// The run went on loading fewer sides at once, as it goes on now.
		l := *s
		l.Lighten(m.Mode)
		s, lighter = &l, &l
	}
	var names []string
	for _, v := range s.Variants {
		names = append(names, v.Name)
	}
	switch {
	case m.Scenario != s.Name:
		return nil, fmt.Errorf("resume %s: the run was of scenario %q, not %q", path, m.Scenario, s.Name)
	case !slices.Equal(m.Variants, names):
		return nil, fmt.Errorf("resume %s: the run's variants were %s, the scenario's are %s", path, strings.Join(m.Variants, ", "), strings.Join(names, ", "))
	case (m.Precision == nil) != !s.Precision.On:
		return nil, fmt.Errorf("resume %s: the run and the scenario differ in whether rounds run until a precision (precision mode) or a fixed number", path)
	case s.Precision.On && (m.Restart != s.Restart || m.Mode != s.Mode):
		// In precision mode the manifest's rounds and starts are those
		// the stopping rule ran so far.
		return nil, fmt.Errorf("resume %s: the run had restart %s, mode %s; the scenario has %s, %s", path, m.Restart, m.Mode, s.Restart, s.Mode)
	case s.Precision.On:
	case m.Rounds != s.Rounds || m.Restart != s.Restart || m.Mode != s.Mode:
		return nil, fmt.Errorf("resume %s: the run had %d rounds, restart %s, mode %s; the scenario has %d, %s, %s", path, m.Rounds, m.Restart, m.Mode, s.Rounds, s.Restart, s.Mode)
	case m.Starts != startsOf(s):
		return nil, fmt.Errorf("resume %s: the run started its services %d times, the scenario %d", path, max(m.Starts, 1), s.Starts)
	}
	// A trial file that cannot be read is not kept: its trial runs again.
	trials, _, err := dir.ReadTrials()
	if err != nil {
		return nil, err
	}
	planned := map[int]*plan.Trial{}
	for _, t := range plan.New(s, m.Seed).Trials() {
		planned[t.Index] = t
	}
	kept := map[int]bool{}
	next := map[int]int{}
	for _, t := range trials {
		next[t.Step] = max(next[t.Step], t.Launch+1)
		p := planned[t.Index]
		if p == nil || p.Variant != t.Variant || p.Round != t.Round || p.Step != t.Step {
			return nil, fmt.Errorf("resume %s: %s does not match the run's plan (seed %d): the scenario or toll changed since", path, record.TrialFile(t), m.Seed)
		}
		if !t.Interrupted && t.Error == "" {
			kept[t.Index] = true
		}
	}
	if len(kept) == len(planned) {
		return nil, fmt.Errorf("resume %s: all %d trials finished; nothing to resume (toll report renders it)", path, len(planned))
	}
	return &resumption{dir: dir, manifest: m, kept: kept, nextLaunch: next, trials: trials, scenario: lighter}, nil
}

// remaining returns the actions of a plan still to do once the trials in
// kept have finished. Their runs are dropped (trials run at once run again
// unless every one of them finished), and so are the start and stop of a
// variant's services that would run no trial in between: with per-round
// or per-trial restarts, finished rounds start nothing. With restart: once
// (keepStarts) every variant starts again for a start of the services
// under which any trial is left, its own or another's, so that the
// remaining trials run beside the same idle neighbours as the others did;
// a start (starts:) whose trials all finished starts nothing.
func remaining(actions []plan.Action, kept map[int]bool, keepStarts bool) []plan.Action {
	var out []plan.Action
	drop := map[int]bool{} // indices into out
	open := map[string]int{}
	used := map[string]bool{}
	// use marks v's services as running a trial; with keepStarts, every
	// running variant's too.
	use := func(v string) {
		used[v] = true
		if keepStarts {
			for o := range open {
				used[o] = true
			}
		}
	}
	for _, a := range actions {
		switch a.Kind {
		case plan.Start:
			open[a.Variant] = len(out)
			used[a.Variant] = false
		case plan.Run:
			if kept[a.Trial.Index] {
				continue
			}
			use(a.Variant)
		case plan.RunAtOnce:
			if !slices.ContainsFunc(a.Sides, func(t *plan.Trial) bool { return !kept[t.Index] }) {
				continue
			}
			for _, t := range a.Sides {
				use(t.Variant)
			}
		case plan.Stop:
			if i, ok := open[a.Variant]; ok && !used[a.Variant] {
				drop[i] = true
				delete(open, a.Variant)
				continue
			}
			delete(open, a.Variant)
		}
		out = append(out, a)
	}
	kept2 := out[:0]
	for i, a := range out {
		if !drop[i] {
			kept2 = append(kept2, a)
		}
	}
	return kept2
}

// countTrials counts the trials actions run.
func countTrials(actions []plan.Action) int {
	n := 0
	for _, a := range actions {
		switch a.Kind {
		case plan.Run:
			n++
		case plan.RunAtOnce:
			n += len(a.Sides)
		}
	}
	return n
}

// resumed updates the manifest of a run being continued: it is running
// again, says how much of it was kept, and, in precision mode, how much of
// the budget the sittings before spent.
func (res *resumption) resumed(rerun int) *record.Manifest {
	m := res.manifest
	if m.Precision != nil {
		// The sitting that was interrupted spent part of the budget.
		from := m.Started
		if n := len(m.Resumes); n > 0 {
			from = m.Resumes[n-1].At
		}
		// A run killed outright recorded no end: its manifest, rewritten
		// after every trial, was last written about then.
		to := m.Finished
		if to.IsZero() {
			to, _ = res.dir.ManifestWritten() // none: nothing counted
		}
		if to.After(from) {
			m.Precision.SpentS += to.Sub(from).Seconds()
		}
	}
	m.Finished = time.Time{}
	m.Interrupted, m.Error = false, ""
	m.Resumes = append(m.Resumes, record.Resume{At: time.Now().UTC(), Kept: len(res.kept), Rerun: rerun, Command: commandLine(os.Args)})
	return m
}
