package scenario

import (
	"fmt"
	"path/filepath"
	"regexp"
	"time"
)

// Defaults of start-up and job experiments.
const (
	// DefaultRepetitions is the number of starts or jobs per variant: as
	// many as a load test's rounds, for intervals of the same use.
	DefaultRepetitions = 10
	// DefaultJobTimeout bounds one run of a job.
	DefaultJobTimeout = 10 * time.Minute
	// DefaultPer is the amount of work wall time is scaled to.
	DefaultPer = 1_000_000
)

// Bounds of start-up and job experiments.
const (
	// MaxRepetitions bounds repetitions: every start or job is a trial,
	// and the plan holds every trial in memory (as MaxRounds).
	MaxRepetitions = MaxRounds
	// MaxLogMetrics bounds the figures read from a log: each becomes a
	// row of every report.
	MaxLogMetrics = 20
	// MaxCPULimits bounds cpu_limits: each repeats the whole experiment.
	MaxCPULimits = MaxSteps
)

var reMetricName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// workload checks the startup: and job: blocks and fills in their defaults.
// It reports whether the scenario is a load test (and so needs load:).
func (v *validator) workload(s *Scenario) bool {
	if s.Startup != nil && s.Job != nil {
		v.fail("job", "a scenario is a start-up experiment (startup:) or a job (job:), not both")
		return false
	}
	switch {
	case s.Startup != nil:
		v.startup(s)
	case s.Job != nil:
		v.job(s)
	default:
		for i, vr := range s.Variants {
			p := fmt.Sprintf("variants[%d]", i)
			if len(vr.Job.Command)+len(vr.Job.Args)+len(vr.Job.Env) > 0 {
				v.fail(p+".job", "changes the job, and this scenario has no job: block")
			}
			if len(vr.Prepare) > 0 || len(vr.BeforeEach) > 0 {
				v.fail(p+".prepare", "prepare and before_each run before starts and jobs, and this scenario is a load test (add startup: or job:)")
			}
		}
		return true
	}
	if v.asStartup {
		s.Load, s.Mode = Load{}, ModeSequential
	}
	if v.present("matrix") && !v.asStartup {
		field := "startup.cpu_limits"
		if s.Job != nil {
			field = "a cpu_limit on the job's services"
		}
		v.fail("matrix", "repeats a load test under each setting; a %s experiment has its own (%s)", s.Workload(), field)
	}
	if v.asStartup {
		s.Matrix = Matrix{}
	}
	if v.present("load") && !v.asStartup {
		v.fail("load", "a %s experiment sends no load; leave load out", s.Workload())
	}
	if v.present("mode") && s.Concurrent() && !v.asStartup {
		v.fail("mode", "a %s experiment runs one variant at a time; mode: %s is for load tests", s.Workload(), s.Mode)
	}
	if v.present("rounds") && !v.asStartup {
		v.fail("rounds", "a %s experiment counts its repetitions (%s.repetitions), not rounds", s.Workload(), s.Workload())
	}
	for i, vr := range s.Variants {
		p := fmt.Sprintf("variants[%d]", i)
		v.command(p+".prepare", vr.Prepare, false)
		v.command(p+".before_each", vr.BeforeEach, false)
	}
	return false
}

func (v *validator) repetitions(field string, n *int) {
	switch {
	case !v.present(field):
		*n = DefaultRepetitions
	case *n < 1:
		v.fail(field, "must be at least 1, not %d (leave it out for the default of %d)", *n, DefaultRepetitions)
	case *n > MaxRepetitions:
		v.fail(field, "%d is above toll's limit of %d: the plan holds every start or job in memory", *n, MaxRepetitions)
	}
}

func (v *validator) startup(s *Scenario) {
	st := s.Startup
	v.repetitions("startup.repetitions", &st.Repetitions)
	if v.present("restart") && s.Restart != RestartPerTrial && !v.asStartup {
		v.fail("restart", "a start-up experiment starts the services afresh for every repetition; leave restart out")
	}
	s.Restart = RestartPerTrial
	if v.present("starts") && !v.asStartup {
		v.fail("starts", "a start-up experiment starts the services afresh for every repetition; leave starts out")
	}
	s.Starts = 1
	v.count("startup.cpu_limits", len(st.CPULimits), MaxCPULimits, "CPU limits", "each repeats the whole experiment")
	seen := map[float64]bool{}
	for i, c := range st.CPULimits {
		f := fmt.Sprintf("startup.cpu_limits[%d]", i)
		online := len(v.m.online)
		switch {
		case c < MinCPULimit:
			v.fail(f, "%s cores is below the least of %s: the kernel's smallest CPU quota is 1ms per toll's 100ms period", fmtFloat(c), fmtFloat(MinCPULimit))
		case online > 0 && c > float64(online):
			v.fail(f, "%s cores is more than the %d CPUs toll may use (%s)", fmtFloat(c), online, v.m.online)
		case seen[c]:
			v.fail(f, "%s cores is listed twice", fmtFloat(c))
		}
		seen[c] = true
	}
	for i, svc := range s.Services {
		if svc.Ready.HTTP == "" && svc.Ready.TCP == "" && (svc.Measure || svc.Role == RoleAgent || len(s.Services) == 1) {
			v.fail(fmt.Sprintf("services[%d].ready", i), "a start-up experiment times each measured service to readiness; service %q needs ready.http or ready.tcp", svc.Name)
		}
	}
	v.logMetrics("startup.log_metrics", st.LogMetrics)
	if n := st.Repetitions * len(s.Steps()) * len(s.Variants); n > MaxTrials {
		v.fail("startup.repetitions", "%d repetitions × %d CPU limits × %d variants make %d starts, above toll's limit of %d: the plan holds every start in memory", st.Repetitions, len(s.Steps()), len(s.Variants), n, MaxTrials)
	}
}

func (v *validator) job(s *Scenario) {
	j := s.Job
	v.repetitions("job.repetitions", &j.Repetitions)
	if v.present("restart") && s.Restart != RestartOnce {
		v.fail("restart", "a job's services (a broker, a database) run for the whole experiment; leave restart out")
	}
	s.Restart = RestartOnce
	if v.present("starts") {
		v.fail("starts", "a job's services run for the whole experiment; leave starts out")
	}
	s.Starts = 1
	v.command("job.command", j.Command, true)
	v.env("job.env", j.Env)
	v.noNUL("job.dir", j.Dir)
	if j.Dir == "" {
		j.Dir = dirOf(v.file)
	} else if !filepath.IsAbs(j.Dir) {
		j.Dir = filepath.Join(dirOf(v.file), j.Dir)
	}
	if !v.present("job.timeout") {
		j.Timeout = Duration(DefaultJobTimeout)
	}
	v.duration("job.timeout", j.Timeout)
	if v.present("job.work") && !(j.Work > 0 && j.Work <= 1e15) {
		v.fail("job.work", "%s is not an amount of work between 0 and 1e15 (leave work out when the job's work has no count)", fmtFloat(j.Work))
	}
	switch {
	case !v.present("job.per"):
		j.Per = DefaultPer
	case !(j.Per > 0 && j.Per <= 1e15):
		v.fail("job.per", "%s is not an amount of work between 0 and 1e15", fmtFloat(j.Per))
	case j.Work == 0:
		v.fail("job.per", "scales wall time per amount of work, and job.work (the work one run does) is not set")
	}
	if err := checkText(j.Unit, MaxRequestNameLen); err != nil {
		v.fail("job.unit", "%s", err)
	}
	for i, vr := range s.Variants {
		p := fmt.Sprintf("variants[%d].job", i)
		if len(vr.Job.Command) > 0 {
			v.command(p+".command", vr.Job.Command, true)
		}
		for k, a := range vr.Job.Args {
			v.noNUL(fmt.Sprintf("%s.args[%d]", p, k), a)
			v.placeholders(fmt.Sprintf("%s.args[%d]", p, k), a)
		}
		v.env(p+".env", vr.Job.Env)
	}
	v.logMetrics("job.log_metrics", j.LogMetrics)
	if n := j.Repetitions * len(s.Variants); n > MaxTrials {
		v.fail("job.repetitions", "%d repetitions × %d variants make %d jobs, above toll's limit of %d: the plan holds every job in memory", j.Repetitions, len(s.Variants), n, MaxTrials)
	}
}

// command checks an argv; required says it must be there.
func (v *validator) command(field string, argv []string, required bool) {
	if len(argv) == 0 {
		if required {
			v.fail(field, "is required (the command to run, as a list: [program, arg, …])")
		}
		return
	}
	if argv[0] == "" {
		v.fail(field+"[0]", "the program is empty")
	}
	for i, a := range argv {
		v.noNUL(fmt.Sprintf("%s[%d]", field, i), a)
		v.placeholders(fmt.Sprintf("%s[%d]", field, i), a)
	}
}

// logMetrics checks figures read from logs: names that become cost names,
// and regular expressions with one group.
func (v *validator) logMetrics(field string, ms []LogMetric) {
	v.count(field, len(ms), MaxLogMetrics, "log metrics", "each becomes a row of every report")
	seen := map[string]bool{}
	for i := range ms {
		m := &ms[i]
		p := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case !reMetricName.MatchString(m.Name) || len(m.Name) > MaxNameLen:
			v.fail(p+".name", "%q must be lower-case letters, digits and '_', starting with a letter, at most %d bytes: it names a cost in summary.json and OpenMetrics", m.Name, MaxNameLen)
		case seen[m.Name]:
			v.fail(p+".name", "%q is used twice", m.Name)
		}
		seen[m.Name] = true
		re, err := regexp.Compile(m.Regex)
		switch {
		case m.Regex == "":
			v.fail(p+".regex", "is required: a regular expression whose first group holds the number")
		case err != nil:
			v.fail(p+".regex", "%q is not a Go regular expression: %s", m.Regex, err)
		case re.NumSubexp() < 1:
			v.fail(p+".regex", "%q has no capture group; put the number in parentheses, e.g. 'in ([0-9.]+) seconds'", m.Regex)
		}
		if err := checkText(m.Unit, 20); err != nil {
			v.fail(p+".unit", "%s", err)
		}
		if m.Unit == "" {
			if k := len(m.Name) - 1; k > 0 {
				for ; k > 0 && m.Name[k] != '_'; k-- {
				}
				if k > 0 {
					m.Unit = m.Name[k+1:]
				}
			}
		}
	}
}
