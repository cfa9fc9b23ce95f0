package scenario

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/pin"
)

const good = `name: demo
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}"]
    ready: {http: "http://127.0.0.1:${port:provider}/health"}
  - name: consumer
    command: [toll, app, consumer]
    measure: true
    memory_limit: 256MiB
variants:
  - name: baseline
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel], env: {A: b}}
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests:
    - {path: /consumer}
  rate: 100
  duration: 10s
`

func TestParseDefaults(t *testing.T) {
	s, err := Parse("demo.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	// In precision mode, with no JVM: a shared duet, a start every round,
	// and a short warm-up before each window, all chosen by toll.
	if s.Rounds != PrecisionMaxRounds || !s.Precision.On || s.Restart != RestartPerRound || s.Mode != ModeDuet || s.Baseline != "baseline" || s.Network != NetworkHost {
		t.Errorf("defaults: rounds=%d restart=%q mode=%q baseline=%q network=%q", s.Rounds, s.Restart, s.Mode, s.Baseline, s.Network)
	}
	if s.Load.Warmup.D() != ChosenWarmup || s.Load.Timeout.D() != DefaultTimeout || s.Sample.D() != time.Second {
		t.Errorf("load defaults: %+v sample=%v", s.Load, s.Sample)
	}
	r := s.Load.Requests[0]
	if r.Name != "/consumer" || r.Method != "GET" || r.Weight != 1 {
		t.Errorf("request defaults: %+v", r)
	}
	if s.Services[1].MemoryLimit != 256<<20 || s.Services[0].Role != RoleApp {
		t.Errorf("service: %+v", s.Services[1])
	}
	if !filepath.IsAbs(s.Services[0].Dir) {
		t.Errorf("dir %q not absolute", s.Services[0].Dir)
	}
	if got := s.Load.Steps(); len(got) != 1 || got[0] != (Step{Rate: 100}) {
		t.Errorf("steps %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, old, new string
		want           string // substring of the one-line error, which starts with file:line
	}{
		{"typo field", "    measure: true\n", "    mesure: true\n", `demo.yaml:8: services[1].mesure: unknown field "mesure" in service (did you mean "measure"?)`},
		{"typo in a variant's load", "    exports: true\n", "    exports: true\n    load: {targte: \"http://127.0.0.1:1\"}\n", `demo.yaml:14: variants[1].load.targte: unknown field "targte" in variantload (did you mean "target"?)`},
		{"rate not a number", "rate: 100", "rate: fast", `demo.yaml:20: load.rate: "fast" is not a number`},
		{"missing command", "    command: [toll, app, consumer]\n", "", `demo.yaml:6: services[1]: command is required (service "consumer")`},
		{"bad duration", "duration: 10s", "duration: ten", `demo.yaml:21: load.duration: "ten" is not a duration`},
		{"bad size", "256MiB", "lots", `demo.yaml:9: services[1].memory_limit: "lots" is not a size`},
		{"unknown service in variant", "      consumer: {args", "      consumr: {args", `demo.yaml:15: variants[1].services.consumr: no service named "consumr" (did you mean "consumer"?)`},
		{"far service in variant", "      consumer: {args", "      zzz: {args", `variants[1].services.zzz: no service named "zzz" (known: provider, consumer)`},
		{"misspelt baseline", "name: demo\n", "name: demo\nbaseline: baselin\n", `variants: no variant is named "baselin" (the baseline) (did you mean "baseline"?)`},
		{"misspelt layout", "name: demo\n", "name: demo\nreport: {layout: sermnt}\n", `report.layout: "sermnt" is not a layout (did you mean "sermant"?)`},
		{"no baseline", "  - name: baseline\n", "", `variants: no variant is named "baseline"`},
		{"bad placeholder", "${port:consumer}", "${prot:consumer}", `load.target: unknown placeholder ${prot:consumer}`},
		{"rounds wrong type", "  duration: 10s\n", "  duration: 10s\nrounds: [1]\n", `demo.yaml:22: rounds: a list is not a whole number`},
		{"syntax", "variants:", "variants: [", `demo.yaml:`},
		{"missing duration", "  duration: 10s\n", "", `load.duration: is required`},
		{"bad method", "{path: /consumer}", "{path: /consumer, method: FETCH}", `load.requests[0].method: "FETCH" is not an HTTP method`},
		{"bad network", "name: demo\n", "name: demo\nnetwork: bogus\n", `demo.yaml:2: network: "bogus" is not one of host, isolated`},
		{"users and rate", "rate: 100", "rate: 100\n  users: 10", `demo.yaml:21: load.users: set users (closed model) or rate/rates (open model), not both`},
		{"users not numbers", "rate: 100", "users: [a, 2]", `demo.yaml:20: load.users: "a" is not a whole number`},
		{"think in open model", "rate: 100", "rate: 100\n  think: 1s", `load.think: applies to the closed model only (set users)`},
		{"bad think distribution", "rate: 100", "users: 5\n  think_distribution: gamma", `load.think_distribution: "gamma" is not one of constant, exponential`},
		{"quantum in closed model", "rate: 100", "users: 5\n  quantum: 2ms", `load.quantum: applies to the open model only`},
		{"unknown request placeholder", "{path: /consumer}", "{path: \"/consumer/${idx}\"}", `unknown placeholder ${idx}`},
		{"bad duet placement", "name: demo\n", "name: demo\nmode: duet\npinning: {duet: half}\n", `demo.yaml:3: pinning.duet: "half" is not one of split, shared`},
		{"duet placement without a duet", "name: demo\n", "name: demo\npinning:\n  duet: shared\n", `demo.yaml:3: pinning.duet: places the two sides of mode: duet, and this scenario's mode is sequential`},
		{"bad mode", "name: demo\n", "name: demo\nmode: all\n", `demo.yaml:2: mode: "all" is not one of sequential, duet, together`},
		{"variants together on split CPUs", "name: demo\n", "name: demo\nmode: together\npinning: {duet: split}\n", `demo.yaml:3: pinning.duet: split gives the two sides of a duet halves of the services' CPUs; mode: together runs every variant on all of them`},
		{"variants together in turns", "  duration: 10s\n", "  duration: 10s\n  slice: 250ms\nmode: together\n", `load.slice: makes the two sides of a shared duet take turns; mode: together loads every variant at once`},
		{"unknown top-level", "name: demo", "nmae: demo", `demo.yaml:1: nmae: unknown field "nmae" in scenario (did you mean "name"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(good, tt.old, tt.new, 1)
			if src == good {
				t.Fatalf("test did not change the scenario")
			}
			_, err := Parse("demo.yaml", []byte(src))
			if err == nil {
				t.Fatalf("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n  %s\nwant it to contain\n  %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestDuetDefaults(t *testing.T) {
	tests := []struct{ add, placement, restart string }{
		{"mode: duet\nrestart: once\n", DuetSplit, RestartOnce},
		{"mode: duet\nrestart: per-round\npinning: {duet: shared}\n", DuetShared, RestartPerRound},
		{"mode: together\nrestart: once\n", DuetShared, RestartOnce},
		{"mode: together\npinning: {duet: shared}\nrestart: once\n", DuetShared, RestartOnce},
		// Precision mode, no JVM, no restart named: toll starts them
		// every round.
		{"mode: duet\n", DuetSplit, RestartPerRound},
	}
	m := testMachine
	m.online = pin.CPUs{0, 1, 2, 3} // enough for a split duet
	for _, tt := range tests {
		s, err := parse("demo.yaml", []byte(strings.Replace(good, "name: demo\n", "name: demo\n"+tt.add, 1)), m)
		if err != nil {
			t.Fatalf("%q: %v", tt.add, err)
		}
		if s.Pinning.Duet != tt.placement || s.Restart != tt.restart {
			t.Errorf("%q: placement %q restart %q, want %q %q", tt.add, s.Pinning.Duet, s.Restart, tt.placement, tt.restart)
		}
	}
}

// TestParseRefusesCollidingNames checks that two variants whose services
// would share a name (variant baseline with service x.provider, variant
// baseline.x with service provider: both baseline.x.provider, the name of
// a cgroup and a log file) are refused at the second variant's name; toll
// check passed them and toll run failed on "cgroup already exists".
func TestParseRefusesCollidingNames(t *testing.T) {
	extra := "  - name: x.provider\n    command: [sleep, \"100\"]\n"
	tests := []struct {
		name, src, want string
	}{
		{"variant.service", strings.NewReplacer("  - name: otel\n", "  - name: baseline.x\n", "variants:\n", extra+"variants:\n").Replace(good),
			`demo.yaml:14: variants[1].name: variant "baseline.x" with service "provider" and variant "baseline" with service "x.provider" (variants[0]) both make "baseline.x.provider"`},
		{"variant.service, later variant first", strings.NewReplacer("  - name: baseline\n", "  - name: baseline.x\n  - name: baseline\n", "variants:\n", extra+"variants:\n").Replace(good),
			`demo.yaml:14: variants[1].name: variant "baseline" with service "x.provider" and variant "baseline.x" with service "provider" (variants[0]) both make "baseline.x.provider"`},
		{"no collision", strings.NewReplacer("  - name: otel\n", "  - name: baseline.y\n", "variants:\n", extra+"variants:\n").Replace(good), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("demo.yaml", []byte(tt.src), testMachine)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want == "":
			case err == nil:
				t.Errorf("accepted:\n%s", tt.src)
			case !strings.HasPrefix(err.Error(), tt.want):
				t.Errorf("error\n  %v\nwant it to start with\n  %s", err, tt.want)
			}
		})
	}
}

// TestConcurrentModesAgainstTheMachine reads duets and variants together
// against machines of 1 to 4 CPUs: what toll run cannot place is refused
// when the file is read, at the mode's line, so toll check refuses it too
// (a split duet on 2 CPUs passed check and was refused by run, exit 1).
func TestConcurrentModesAgainstTheMachine(t *testing.T) {
	tests := []struct {
		add  string
		cpus int
		at   string // line and field; "" where the scenario is accepted
		want string
	}{
		{"mode: duet\n", 4, "", ""},
		{"mode: duet\n", 2, "2: mode", "duet with pinning.duet: split (the default) runs the baseline and a variant at the same time on disjoint CPU sets and needs at least 4 CPUs"},
		{"mode: duet\npinning: {duet: split}\n", 3, "2: mode", "needs at least 4 CPUs (1 for toll, the rest split evenly); this machine's online CPUs (toll's affinity) are 0-2"},
		{"mode: duet\npinning: {duet: shared}\n", 2, "", ""},
		{"mode: duet\npinning: {duet: shared}\n", 1, "2: mode", "duet with pinning.duet: shared needs at least 2 CPUs"},
		{"mode: together\n", 2, "", ""},
		{"mode: together\n", 1, "2: mode", "together needs at least 2 CPUs"},
		{"mode: duet\npinning: {duet: shared, off: true}\n", 4, "3: pinning.off", "mode: duet needs CPU pinning"},
		{"pinning: {off: true}\n", 1, "", ""},
	}
	for _, tt := range tests {
		m := testMachine
		m.online = nil
		for c := range tt.cpus {
			m.online = append(m.online, c)
		}
		src := strings.Replace(good, "name: demo\n", "name: demo\n"+tt.add, 1)
		_, err := parse("demo.yaml", []byte(src), m)
		switch {
		case tt.at == "" && err != nil:
			t.Errorf("%q on %d CPUs: %v", tt.add, tt.cpus, err)
		case tt.at == "":
		case err == nil:
			t.Errorf("%q on %d CPUs: accepted", tt.add, tt.cpus)
		case !strings.HasPrefix(err.Error(), "demo.yaml:"+tt.at+": ") || !strings.Contains(err.Error(), tt.want):
			t.Errorf("%q on %d CPUs:\n  %v\nwant demo.yaml:%s: …%s…", tt.add, tt.cpus, err, tt.at, tt.want)
		}
	}
}

func TestLoadModels(t *testing.T) {
	tests := []struct {
		name, old, new string
		steps          []Step
		closed         bool
		quantum        time.Duration
		arrival        string
	}{
		{"open default: each request at its own time, uniform", "", "", []Step{{Rate: 100}}, false, 0, ArrivalUniform},
		{"open steps, exact", "rate: 100", "rates: [10, 20]\n  quantum: 0", []Step{{Rate: 10}, {Rate: 20}}, false, 0, ArrivalUniform},
		{"open, a release grid by choice", "rate: 100", "rate: 100\n  quantum: 2ms", []Step{{Rate: 100}}, false, 2 * time.Millisecond, ArrivalUniform},
		{"open, poisson", "rate: 100", "rate: 100\n  arrival: poisson", []Step{{Rate: 100}}, false, 0, ArrivalPoisson},
		{"open, uniform named", "rate: 100", "rate: 100\n  arrival: uniform", []Step{{Rate: 100}}, false, 0, ArrivalUniform},
		{"closed", "rate: 100", "users: 50\n  think: 100ms\n  think_distribution: exponential\n  ramp: 5s", []Step{{Users: 50}}, true, 0, ArrivalUniform},
		{"closed steps", "rate: 100", "users: [50, 100]", []Step{{Users: 50}, {Users: 100}}, true, 0, ArrivalUniform},
		{"templated request", "{path: /consumer}", "{path: \"/consumer/${id}\", headers: {X-Id: \"${id}\"}}", []Step{{Rate: 100}}, false, 0, ArrivalUniform},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("demo.yaml", []byte(strings.Replace(good, tt.old, tt.new, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Load.Steps(); !slices.Equal(got, tt.steps) {
				t.Errorf("steps %v, want %v", got, tt.steps)
			}
			if s.Load.Closed() != tt.closed || s.Load.QuantumOrDefault() != tt.quantum || s.Load.ArrivalOrDefault() != tt.arrival {
				t.Errorf("closed %v quantum %s arrival %s, want %v %s %s", s.Load.Closed(), s.Load.QuantumOrDefault(), s.Load.ArrivalOrDefault(), tt.closed, tt.quantum, tt.arrival)
			}
		})
	}
	if got := (Step{Users: 50}).String() + ", " + (Step{Rate: 2.5}).String(); got != "50 users, 2.5 req/s" {
		t.Errorf("Step.String: %q", got)
	}
}

func TestExamplesParse(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, f := range files {
		if _, err := Read(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestExpand(t *testing.T) {
	got := Expand("http://127.0.0.1:${port:a}/x?${variant}", func(k string) string {
		return map[string]string{"port:a": "8080", "variant": "otel"}[k]
	})
	if got != "http://127.0.0.1:8080/x?otel" {
		t.Errorf("got %q", got)
	}
}

func TestReadMissingFile(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !os.IsNotExist(errUnwrapAll(err)) {
		t.Errorf("err = %v", err)
	}
}

func errUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// TestExamples checks that every scenario shipped in examples/,
// examples/java/ and examples/go-otel/ reads, one that names ${version}
// with a version given.
func TestExamples(t *testing.T) {
	paths, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, dir := range []string{"java", "go-otel"} {
		more, _ := filepath.Glob(filepath.Join("../examples", dir, "*.yaml"))
		if len(more) == 0 {
			t.Errorf("no examples in examples/%s", dir)
		}
		paths = append(paths, more...)
	}
	for _, p := range paths {
		var o Overrides
		if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), "${version}") {
			o.Vars = map[string]string{"version": "2.33.1"}
		}
		if _, err := ReadWith(p, o); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestImageDefaults checks that a service with an image needs no command,
// gets the auto engine, and keeps an empty dir (the image's own) rather
// than the scenario file's directory, which is a host path.
func TestImageDefaults(t *testing.T) {
	src := `name: c
services:
  - name: app
    image: localhost/app:1
    ready: {http: "http://127.0.0.1:8080/health"}
    measure: true
  - name: pinned
    image: localhost/app:1
    engine: docker
    command: [serve]
    dir: /srv
variants:
  - name: baseline
load:
  target: "http://127.0.0.1:8080"
  requests: [{path: /}]
  rate: 10
  duration: 10s
`
	s, err := Parse("/tmp/c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	app, pinned := s.Services[0], s.Services[1]
	if app.Engine != EngineAuto || app.Dir != "" || len(app.Command) != 0 {
		t.Errorf("app: engine %q, dir %q, command %q; want auto, the image's dir and command", app.Engine, app.Dir, app.Command)
	}
	if pinned.Engine != EngineDocker || pinned.Dir != "/srv" {
		t.Errorf("pinned: engine %q, dir %q", pinned.Engine, pinned.Dir)
	}
	_, err = Parse("/tmp/c.yaml", []byte(strings.Replace(src, "command: [serve]", `command: [""]`, 1)))
	if err == nil || !strings.Contains(err.Error(), "services[1].command") {
		t.Errorf("an empty first word of a container's command: %v", err)
	}
}

// TestIdleSteps checks rate: 0: an idle step, alone or among rates, that
// needs no target or requests when no step sends any.
func TestIdleSteps(t *testing.T) {
	tests := []struct {
		name, old, new string
		want           []string
	}{
		{"idle alone", "  rate: 100\n", "  rate: 0\n", []string{"idle"}},
		{"idle first", "  rate: 100\n", "  rates: [0, 100]\n", []string{"idle", "100 req/s"}},
		{"idle without target or requests", "  target: \"http://127.0.0.1:${port:consumer}\"\n  requests:\n    - {path: /consumer}\n  rate: 100\n", "  rate: 0\n", []string{"idle"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(good, tt.old, tt.new, 1)
			if src == good {
				t.Fatal("test did not change the scenario")
			}
			s, err := parse("demo.yaml", []byte(src), testMachine)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, st := range s.Steps() {
				got = append(got, st.String())
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("steps %q, want %q", got, tt.want)
			}
		})
	}
	// A step that sends requests still needs them.
	src := strings.Replace(good, "    - {path: /consumer}\n  rate: 100\n", "  - {path: /consumer}\n  rates: [0, 100]\n", 1)
	src = strings.Replace(src, "  requests:\n  - {path: /consumer}\n", "", 1)
	if _, err := parse("demo.yaml", []byte(src), testMachine); err == nil || !strings.Contains(err.Error(), "load.requests: at least one request is required") {
		t.Errorf("rates [0, 100] without requests: %v", err)
	}
}

// TestMatrixSteps checks that a matrix repeats every load step under each
// CPU limit, the limit the outer loop, and that per-variant limits and
// the variant's load target are read.
func TestMatrixSteps(t *testing.T) {
	src := strings.Replace(good, "  rate: 100\n", "  rates: [0, 100]\n  variant_warmup: 1m\n", 1) + "matrix: {cpus: [1, 0.5]}\n"
	src = strings.Replace(src, "    exports: true\n", "    exports: true\n    cpu_limit: 0.5\n    memory_limit: 512MiB\n    load: {target: \"http://127.0.0.1:${port:sidecar}\"}\n", 1)
	src = strings.Replace(src, "env: {A: b}}", "env: {A: b}, cpu_limit: 1.5, memory_limit: 1GiB}", 1)
	s, err := parse("demo.yaml", []byte(src), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Steps() {
		got = append(got, st.String())
	}
	want := []string{"1 CPU, idle", "1 CPU, 100 req/s", "0.5 CPU, idle", "0.5 CPU, 100 req/s"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("steps %q, want %q", got, want)
	}
	v, _ := s.Variant("otel")
	o := v.Services["consumer"]
	if v.CPULimit != 0.5 || v.MemoryLimit != 512<<20 || o.CPULimit != 1.5 || o.MemoryLimit != 1<<30 || v.Load.Target != "http://127.0.0.1:${port:sidecar}" {
		t.Errorf("variant limits %v %v, override %v %v, target %q", v.CPULimit, v.MemoryLimit, o.CPULimit, o.MemoryLimit, v.Load.Target)
	}
	if s.Load.VariantWarmup.D() != time.Minute {
		t.Errorf("variant_warmup %s, want 1m", s.Load.VariantWarmup)
	}
	if (Step{CPULimit: 2}).String() != "2 CPU" {
		t.Errorf("a start-up step reads %q", Step{CPULimit: 2})
	}
}

// TestVariantWarmupUntil checks that a warm-up's end condition is read: its
// JIT rate threshold and window beside the maximum it shortens.
func TestVariantWarmupUntil(t *testing.T) {
	src := strings.Replace(good, "  rate: 100\n", "  rate: 100\n  variant_warmup: 5m\n  variant_warmup_until: {jit_below: 5ms, over: 10s}\n", 1)
	s, err := parse("demo.yaml", []byte(src), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	u := s.Load.VariantWarmupUntil
	if u == nil || u.JITBelow.D() != 5*time.Millisecond || u.Over.D() != 10*time.Second || s.Load.VariantWarmup.D() != 5*time.Minute {
		t.Errorf("variant warm-up %s until %+v, want 5m until 5ms/s over 10s", s.Load.VariantWarmup, u)
	}
}

// TestVariantWarmupInTwoPhases checks that users and a rate together are
// read as one warm-up in two phases when it ends as the JIT settles.
func TestVariantWarmupInTwoPhases(t *testing.T) {
	src := strings.Replace(good, "  rate: 100\n", "  rate: 100\n  variant_warmup: 2m\n  variant_warmup_until: {jit_below: 5ms, over: 10s}\n  variant_warmup_users: 2\n  variant_warmup_rate: 600\n", 1)
	s, err := parse("demo.yaml", []byte(src), testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if s.Load.VariantWarmupUsers != 2 || s.Load.VariantWarmupRate != 600 {
		t.Errorf("variant warm-up by %d users then at %g req/s, want 2 then 600", s.Load.VariantWarmupUsers, s.Load.VariantWarmupRate)
	}
}

func TestLaunch(t *testing.T) {
	tests := []struct {
		rounds, starts int
		want           []int // the start of each round, from round 1
	}{
		{4, 1, []int{0, 0, 0, 0}},
		{4, 2, []int{0, 0, 1, 1}},
		{7, 3, []int{0, 0, 0, 1, 1, 2, 2}},
		{3, 3, []int{0, 1, 2}},
	}
	for _, tt := range tests {
		s := &Scenario{Rounds: tt.rounds, Starts: tt.starts}
		var got []int
		for r := 1; r <= tt.rounds; r++ {
			got = append(got, s.Launch(r))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%d rounds, %d starts: %v, want %v", tt.rounds, tt.starts, got, tt.want)
		}
	}
}
