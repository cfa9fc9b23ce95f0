package analyze

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"
	"github.com/tollperf/toll/probe/profile"
	"github.com/tollperf/toll/record"
)

// stackProfile is a profile of seconds whole seconds in which each function
// of nsPerSecond, a leaf called from main.main ("caller;leaf": called from
// caller, called from main.main), ran that many nanoseconds a second, as
// probe/profile writes one.
func stackProfile(seconds int, nsPerSecond map[string]int64) *pprof.Profile {
	p := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: profile.SamplesType, Unit: "count"}, {Type: profile.CPUType, Unit: "nanoseconds"}},
		PeriodType: &pprof.ValueType{Type: profile.CPUType, Unit: "nanoseconds"},
		Period:     1_000_000,
	}
	m := &pprof.Mapping{ID: 1, File: "svc", HasFunctions: true}
	p.Mapping = []*pprof.Mapping{m}
	loc := func(name string) *pprof.Location {
		for _, l := range p.Location {
			if l.Line[0].Function.Name == name {
				return l
			}
		}
		fn := &pprof.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: "svc"}
		p.Function = append(p.Function, fn)
		l := &pprof.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Line: []pprof.Line{{Function: fn}}}
		p.Location = append(p.Location, l)
		return l
	}
	root := loc("main.main")
	for s := range seconds {
		for name, ns := range nsPerSecond {
			// "a;b": b called by a, called by main.main.
			frames := strings.Split(name, ";")
			var stack []*pprof.Location
			for i := len(frames) - 1; i >= 0; i-- {
				stack = append(stack, loc(frames[i]))
			}
			p.Sample = append(p.Sample, &pprof.Sample{
				Location: append(stack, root),
				Value:    []int64{ns / 1_000_000, ns},
				Label:    map[string][]string{profile.LabelService: {"svc"}, profile.LabelThread: {"svc"}},
				NumLabel: map[string][]int64{profile.LabelSecond: {int64(s)}},
			})
		}
	}
	return p
}

// profiledRun is a run of five rounds of 5 s in which the baseline serves
// 100 req/s spending handle µs of CPU in app.handle per request, and each
// variant of vs serves its rate spending, per request, the µs its
// functions say; the profiles are kept in files.
type profiledVariant struct {
	name  string
	rate  float64
	perUS map[string]float64 // function → µs per request
}

func profiledRun(t *testing.T, handleUS float64, vs ...profiledVariant) (*Summary, []*record.Trial, map[string]*pprof.Profile) {
	t.Helper()
	return profiledRunNoise(t, []float64{1.0, 1.03, 0.97, 1.01, 0.99}, handleUS, vs...)
}

// profiledRunNoise is profiledRun with every function's CPU in round r
// scaled by noise[r-1], on every side alike.
func profiledRunNoise(t *testing.T, noise []float64, handleUS float64, vs ...profiledVariant) (*Summary, []*record.Trial, map[string]*pprof.Profile) {
	t.Helper()
	m := &record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline"}}
	all := append([]profiledVariant{{name: "baseline", rate: 100, perUS: map[string]float64{"app.handle": handleUS}}}, vs...)
	for _, v := range vs {
		m.Variants = append(m.Variants, v.name)
	}
	files := map[string]*pprof.Profile{}
	var trials []*record.Trial
	for r := 1; r <= len(noise); r++ {
		for _, v := range all {
			total := 0.0
			ns := map[string]int64{}
			for fn, us := range v.perUS {
				ns[fn] = int64(us * noise[r-1] * v.rate * 1000)
				total += us * noise[r-1]
			}
			tr := synthetic(t, len(trials)+1, r, v.name, 5, v.rate, total/1e6, 1000)
			tr.Profile = &record.TrialProfile{File: record.TrialProfileFile(tr), Services: []string{"svc"}, Profiler: "perf"}
			files[tr.Profile.File] = stackProfile(5, ns)
			trials = append(trials, tr)
		}
	}
	s, err := Summarize(m, trials, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, trials, files
}

func readFrom(files map[string]*pprof.Profile) func(string) (*pprof.Profile, error) {
	return func(name string) (*pprof.Profile, error) {
		p, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("read profile: open %s: %w", name, fs.ErrNotExist)
		}
		return p, nil
	}
}

// rowOf returns the row named name among rows.
func rowOf(t *testing.T, rows []ProfileRow, name string) ProfileRow {
	t.Helper()
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %s among %d", name, len(rows))
	return ProfileRow{}
}

func TestProfileAttributesInjectedCost(t *testing.T) {
	const span = "go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End"
	s, trials, files := profiledRun(t, 100, profiledVariant{name: "otel", rate: 100,
		perUS: map[string]float64{"app.handle": 100, span: 40, span + ";runtime.mallocgc": 10}})
	if err := AddProfiles(s, trials, readFrom(files)); err != nil {
		t.Fatal(err)
	}
	if len(s.Profiles) != 1 {
		t.Fatalf("%d profile differences, want 1", len(s.Profiles))
	}
	d := s.Profiles[0]
	if d.Variant != "otel" || d.Rounds != 5 || d.File != "profiles/otel.pb.gz" || d.BaselineFile != "profiles/baseline.pb.gz" {
		t.Errorf("difference = %+v", d)
	}
	if math.Abs(d.Total.Delta-0.050) > 0.002 {
		t.Errorf("total Δ %.4f ms per request, want 0.050", d.Total.Delta)
	}
	top := d.Functions[0]
	if top.Name != span || math.Abs(top.Delta-0.040) > 0.002 || !top.Significant || top.Origin != "agent: go.opentelemetry.io" {
		t.Errorf("top function = %+v, want %s at +0.040 ms, significant, the agent's", top, span)
	}
	if math.Abs(top.SharePct-80) > 3 {
		t.Errorf("the span's share %.1f%%, want 80%%", top.SharePct)
	}
	if h := rowOf(t, d.Functions, "app.handle"); h.Significant || math.Abs(h.Delta) > 0.002 {
		t.Errorf("app.handle, unchanged, reads %+v", h)
	}
	if gc := rowOf(t, d.Origins, OriginRuntime); math.Abs(gc.Delta-0.010) > 0.001 {
		t.Errorf("runtime origin = %+v, want +0.010 ms", gc)
	}
	if c := rowOf(t, d.Causes, OriginApplication); math.Abs(c.Delta) > 0.002 {
		t.Errorf("application cause = %+v, want no change", c)
	}
	if c := rowOf(t, d.Causes, "agent: go.opentelemetry.io"); math.Abs(c.Delta-0.050) > 0.002 || !c.Significant {
		t.Errorf("agent cause = %+v, want +0.050 ms: its code and its allocations", c)
	}
	if c := d.Charged[0]; c.Name != span || math.Abs(c.Delta-0.050) > 0.002 {
		t.Errorf("top charged function = %+v, want %s at +0.050 ms", c, span)
	}
	if p := d.ChargedPackages[0]; p.Name != "go.opentelemetry.io/otel/sdk/trace" || math.Abs(p.SharePct-100) > 5 {
		t.Errorf("top charged package = %+v, want the SDK's with the whole change", p)
	}
	if p := rowOf(t, d.Packages, "go.opentelemetry.io/otel/sdk/trace"); math.Abs(p.Delta-0.040) > 0.002 {
		t.Errorf("package row = %+v", p)
	}
	if m := rowOf(t, d.Inclusive, "main.main"); math.Abs(m.Delta-d.Total.Delta) > 1e-9 {
		t.Errorf("main.main, on every stack, reads %+v inclusive; want the total change %.4f", m, d.Total.Delta)
	}
	if sp := rowOf(t, d.Inclusive, span); math.Abs(sp.Delta-0.050) > 0.002 {
		t.Errorf("the span's inclusive change %+v, want its own and its allocations', +0.050 ms", sp)
	}
	if d.Flame == nil || len(d.Flame.Children) != 1 || d.Flame.Children[0].Name != "main.main" {
		t.Fatalf("flame graph = %+v, want main.main under its root", d.Flame)
	}
	var inSpan *FlameNode
	for _, c := range d.Flame.Children[0].Children {
		if c.Name == span {
			inSpan = c
		}
	}
	if inSpan == nil || inSpan.Baseline != 0 || math.Abs(inSpan.Variant-0.050) > 0.002 {
		t.Errorf("the span's node = %+v, want 0 and 0.050 ms", inSpan)
	}
	names := map[string]bool{}
	for _, f := range s.ProfileFiles {
		names[f.Name] = true
		if err := f.Profile.CheckValid(); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
	if !names["profiles/otel.pb.gz"] || !names["profiles/baseline.pb.gz"] {
		t.Errorf("profile files %v", names)
	}
}

// TestFlameColoursFunctions checks that a flame graph's frames carry their
// function's change over all its stacks: an agent that wraps the handler
// moves the application's unchanged work under its own frame, which must
// not read as added, while the wrapper's own work does.
func TestFlameColoursFunctions(t *testing.T) {
	const mw = "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp.(*middleware).serveHTTP"
	s, trials, files := profiledRun(t, 100, profiledVariant{name: "otel", rate: 100,
		perUS: map[string]float64{mw + ";app.handle": 100, mw: 30}})
	if err := AddProfiles(s, trials, readFrom(files)); err != nil {
		t.Fatal(err)
	}
	node := func(path ...string) *FlameNode {
		n := s.Profiles[0].Flame
		for _, name := range path {
			var next *FlameNode
			for _, c := range n.Children {
				if c.Name == name {
					next = c
				}
			}
			if next == nil {
				t.Fatalf("no frame %q under %q in %+v", name, n.Name, n)
			}
			n = next
		}
		return n
	}
	handle := node("main.main", mw, "app.handle")
	if handle.Baseline != 0 || math.Abs(handle.Variant-0.100) > 0.005 {
		t.Errorf("the wrapped handler's stack = %+v, want 0 and 0.100 ms (the baseline never ran it there)", handle)
	}
	if math.Abs(handle.FunctionBaseline-0.100) > 0.005 || math.Abs(handle.FunctionVariant-handle.FunctionBaseline) > 0.005 {
		t.Errorf("app.handle over all its stacks = %.4f → %.4f ms, want 0.100 on both sides", handle.FunctionBaseline, handle.FunctionVariant)
	}
	wrapper := node("main.main", mw)
	if wrapper.FunctionBaseline != 0 || math.Abs(wrapper.FunctionVariant-0.130) > 0.005 {
		t.Errorf("the wrapper over all its stacks = %.4f → %.4f ms, want 0 → 0.130", wrapper.FunctionBaseline, wrapper.FunctionVariant)
	}
}

// TestProfilePerRequest checks that a profile reads CPU per request: a
// service doing twice the work per request reads twice, one doing the same
// work per request at twice the rate reads the same, and the profiles
// written say so.
func TestProfilePerRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rate  float64
		us    float64
		ratio float64
	}{
		{"twice the work per request", 100, 200, 2},
		{"the same work at twice the rate", 200, 100, 1},
		{"half the work per request", 100, 50, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, trials, files := profiledRun(t, 100, profiledVariant{name: "v", rate: tc.rate, perUS: map[string]float64{"app.handle": tc.us}})
			if err := AddProfiles(s, trials, readFrom(files)); err != nil {
				t.Fatal(err)
			}
			h := rowOf(t, s.Profiles[0].Functions, "app.handle")
			if math.Abs(h.Variant/h.Baseline-tc.ratio) > 0.01 || math.Abs(h.Baseline-0.1) > 0.005 {
				t.Errorf("app.handle: baseline %.4f ms, variant %.4f ms per request; want 0.1 and %.2f times it", h.Baseline, h.Variant, tc.ratio)
			}
			var total = map[string]float64{}
			for _, f := range s.ProfileFiles {
				for _, smp := range f.Profile.Sample {
					total[f.Name] += float64(smp.Value[0]) / 1e6
				}
			}
			if got := total["profiles/v.pb.gz"] / total["profiles/baseline.pb.gz"]; math.Abs(got-tc.ratio) > 0.01 {
				t.Errorf("the written profiles' ratio %.3f, want %.2f", got, tc.ratio)
			}
		})
	}
}

func TestProfileMissingOnOneSide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(trials []*record.Trial, files map[string]*pprof.Profile)
		want   []string
	}{
		{"the file is gone", func(trials []*record.Trial, files map[string]*pprof.Profile) {
			delete(files, trials[2].Profile.File) // round 2's baseline
		}, []string{"trial 3 (baseline, round 2)", "does not exist"}},
		{"the trial was not profiled", func(trials []*record.Trial, files map[string]*pprof.Profile) {
			trials[3].Profile = nil // round 2's variant
		}, []string{"trial 4 (otel, round 2) has no profile"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, trials, files := profiledRun(t, 100, profiledVariant{name: "otel", rate: 100, perUS: map[string]float64{"app.handle": 120}})
			tc.break_(trials, files)
			err := AddProfiles(s, trials, readFrom(files))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.name == "the file is gone" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v does not wrap the read's", err)
			}
		})
	}
}

func TestProfileUnprofiledRunIsLeftAlone(t *testing.T) {
	s, trials, _ := profiledRun(t, 100, profiledVariant{name: "otel", rate: 100, perUS: map[string]float64{"app.handle": 120}})
	for _, tr := range trials {
		tr.Profile = nil
	}
	if err := AddProfiles(s, trials, readFrom(nil)); err != nil || len(s.Profiles) != 0 {
		t.Errorf("AddProfiles on a run without profiles: %v, %d differences", err, len(s.Profiles))
	}
}

func TestChargeOf(t *testing.T) {
	loc := func(name, module string) *pprof.Location {
		return &pprof.Location{Line: []pprof.Line{{Function: &pprof.Function{Name: name, Filename: module}}}}
	}
	const (
		span    = "go.opentelemetry.io/otel/sdk/trace.(*tracer).Start"
		rt      = "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp.(*Transport).RoundTrip"
		handler = "myapp/handlers.Serve" // a module path without a dot
		agent   = "agent: go.opentelemetry.io"
	)
	known := func(pkg string) bool { return !strings.HasPrefix(pkg, "google.golang.org/protobuf") }
	for _, tc := range []struct {
		name       string
		stack      []*pprof.Location
		fn, origin string
	}{
		{"an allocation of the agent's", []*pprof.Location{loc("runtime.mallocgc", "svc"), loc(span, "svc"), loc(handler, "svc")}, span, agent},
		{"a system call of the agent's", []*pprof.Location{loc("do_syscall_64", "[kernel.kallsyms]"), loc("runtime.write", "svc"), loc("os.(*File).Write", "svc"), loc(span, "svc")}, span, agent},
		{"a lock taken by the agent", []*pprof.Location{loc("sync.(*Mutex).Lock", "svc"), loc(span, "svc"), loc(handler, "svc")}, span, agent},
		{"an allocation of the application's, under the agent's middleware", []*pprof.Location{loc("runtime.mallocgc", "svc"), loc(handler, "svc"), loc(span, "svc")}, handler, OriginApplication},
		{"the agent's own code", []*pprof.Location{loc(span, "svc"), loc(handler, "svc")}, span, agent},
		{"the application's own code", []*pprof.Location{loc(handler, "svc"), loc(span, "svc")}, handler, OriginApplication},
		{"the application's call forwarded by the agent's wrapper", []*pprof.Location{loc("runtime.memmove", "svc"), loc("net/http.(*Transport).RoundTrip", "svc"), loc(rt, "svc"), loc("net/http.(*Client).Do", "svc"), loc(handler, "svc")}, handler, OriginApplication},
		{"the wrapper's own work", []*pprof.Location{loc("runtime.mallocgc", "svc"), loc(rt, "svc"), loc(handler, "svc")}, rt, agent},
		{"a library only the variant runs", []*pprof.Location{loc("runtime.memmove", "svc"), loc("google.golang.org/protobuf/proto.Marshal", "svc"), loc(span, "svc")}, "google.golang.org/protobuf/proto.Marshal", OriginNewCode},
		{"package main", []*pprof.Location{loc("runtime.mallocgc", "svc"), loc("main.work", "svc")}, "main.work", OriginApplication},
		{"a JDK method under the agent", []*pprof.Location{loc("java.util.HashMap.put", "[java]"), loc("io.opentelemetry.sdk.trace.SdkSpan.end", "[java]"), loc("com.example.Shop.buy", "[java]")}, "io.opentelemetry.sdk.trace.SdkSpan.end", "agent: io.opentelemetry"},
		{"Python's standard library under the application", []*pprof.Location{loc("json.encoder:encode", "/usr/lib/python3.11/json/encoder.py"), loc("shop:buy", "/srv/shop.py")}, "shop:buy", OriginApplication},
		{"a C application", []*pprof.Location{loc("memcpy", "libc.so.6"), loc("ngx_http_process_request", "nginx")}, "ngx_http_process_request", OriginApplication},
		{"the scheduler, owned by no code", []*pprof.Location{loc("runtime.findRunnable", "svc"), loc("runtime.schedule", "svc"), loc("runtime.mcall", "svc")}, "", OriginRuntime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := chargeOf(tc.stack, "svc", known)
			if ch.fn != tc.fn || ch.origin != tc.origin {
				t.Errorf("chargeOf = %q (%s), want %q (%s)", ch.fn, ch.origin, tc.fn, tc.origin)
			}
		})
	}
}

func TestMethodOf(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"net/http.(*Transport).RoundTrip", "roundtrip"},
		{"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp.(*middleware).serveHTTP", "servehttp"},
		{"slices.SortFunc[go.shape.[]int,go.shape.int]", "sortfunc"},
		{"io.opentelemetry.javaagent.Foo.bar(Ljava/lang/String;)V", "bar"},
		{"flask.app:wsgi_app", "wsgi_app"},
	} {
		if got := methodOf(c.name); got != c.want {
			t.Errorf("methodOf(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPackageOf(t *testing.T) {
	for _, c := range []struct{ name, module, want string }{
		{"go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End", "consumer", "go.opentelemetry.io/otel/sdk/trace"},
		{"io.opentelemetry.sdk.trace.SdkSpan.end", "[java]", "io.opentelemetry.sdk.trace"},
		{"opentelemetry.instrumentation.flask:_before_request", "/v/site-packages/opentelemetry/instrumentation/flask/__init__.py", "opentelemetry.instrumentation.flask"},
		{"flask.app:wsgi_app", "/v/site-packages/flask/app.py", "flask.app"},
		{"Compile::Optimize", "libjvm.so", "libjvm.so"},
		{"runtime.mallocgc", "consumer", "runtime"},
	} {
		if got := packageOf(c.name, c.module); got != c.want {
			t.Errorf("packageOf(%q, %q) = %q, want %q", c.name, c.module, got, c.want)
		}
	}
}

func TestOriginOfJVMThreads(t *testing.T) {
	loc := func(name, module string) *pprof.Location {
		return &pprof.Location{Line: []pprof.Line{{Function: &pprof.Function{Name: name, Filename: module}}}}
	}
	pause := []*pprof.Location{loc("G1ParEvacuateFollowersClosure::do_void", "libjvm.so"), loc("VM_G1CollectForAllocation::doit", "libjvm.so"),
		loc("VMThread::evaluate_operation", "libjvm.so")}
	safepoint := []*pprof.Location{loc("SafepointSynchronize::begin", "libjvm.so"), loc("VMThread::inner_execute", "libjvm.so")}
	for _, tc := range []struct {
		name, thread string
		stack        []*pprof.Location
		want         string
	}{
		{"a GC worker", "GC Thread#0", safepoint, OriginGC},
		{"a G1 concurrent thread", "G1 Conc#0", safepoint, OriginGC},
		{"a compiler", "C2 CompilerThre", safepoint, OriginJIT},
		{"the VM Thread in a collection", "VM Thread", pause, OriginGC},
		{"the VM Thread at another safepoint", "VM Thread", safepoint, OriginRuntime},
		{"the agent's Java code", "http-worker", []*pprof.Location{loc("io.opentelemetry.sdk.trace.SdkSpan.end", "[java]")}, "agent: io.opentelemetry"},
	} {
		if got := originOf(tc.stack, tc.thread); got != tc.want {
			t.Errorf("%s: originOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestChargeTrialSharesGC checks that Go's background GC is charged to the
// code that allocated, in proportion to its allocations' CPU, and stays
// the runtime's where no allocation was sampled.
func TestChargeTrialSharesGC(t *testing.T) {
	loc := func(name string) *pprof.Location {
		return &pprof.Location{Line: []pprof.Line{{Function: &pprof.Function{Name: name, Filename: "svc"}}}}
	}
	const span = "go.opentelemetry.io/otel/sdk/trace.(*tracer).Start"
	alloc := func(by string, ms float64) heldSample {
		return heldSample{locs: []*pprof.Location{loc("runtime.mallocgc"), loc(by), loc("main.main")}, ms: ms}
	}
	gc := heldSample{locs: []*pprof.Location{loc("runtime.scanobject"), loc("runtime.gcDrain"), loc("runtime.gcBgMarkWorker")}, ms: 20}
	c := chargeTrial(&trialProfile{held: []heldSample{alloc(span, 10), alloc("main.handle", 30), gc}}, nil)
	if got := c.functions[span]; math.Abs(got-15) > 1e-9 {
		t.Errorf("the span's charge = %v, want its 10 and a quarter of the GC's 20", got)
	}
	if got := c.functions["main.handle"]; math.Abs(got-45) > 1e-9 {
		t.Errorf("main.handle's charge = %v, want its 30 and three quarters of the GC's 20", got)
	}
	c = chargeTrial(&trialProfile{held: []heldSample{{locs: []*pprof.Location{loc("main.handle")}, ms: 30}, gc}}, nil)
	if got := c.origins[OriginGC]; got != 20 {
		t.Errorf("GC with no allocation sampled charged %v to the runtime's GC, want 20 (%v)", got, c.functions)
	}
}

// TestProfileFailedIsFlagged checks that a trial whose profile failed,
// wholly or for some of its services, is flagged profile with its
// services and error; a trial with no profile leaves its round out of
// where the CPU goes, and one lacking some service's stacks keeps the
// others'.
func TestProfileFailedIsFlagged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		file   bool
		rounds int // of the 5 profiledRun has
	}{
		{"no file", false, 4},
		{"a file lacking a service's stacks", true, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, trials, files := profiledRun(t, 100, profiledVariant{name: "otel", rate: 100, perUS: map[string]float64{"app.handle": 120}})
			broken := trials[3] // round 2's variant
			broken.Profile.Error = "profile svc: perf script: exit status 255"
			if !tc.file {
				broken.Profile.File = ""
			}
			s, err := Summarize(&record.Manifest{Scenario: "x", Baseline: "baseline", Variants: []string{"baseline", "otel"}}, trials, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := AddProfiles(s, trials, readFrom(files)); err != nil {
				t.Fatal(err)
			}
			var g *FlagGroup
			for i := range s.FlagGroups {
				if s.FlagGroups[i].Code == FlagProfile {
					g = &s.FlagGroups[i]
				}
			}
			if g == nil || len(g.Trials) != 1 || g.Trials[0] != broken.Index || g.Invalidates {
				t.Fatalf("flag groups %+v: want profile on trial %d alone, not invalidating", s.FlagGroups, broken.Index)
			}
			// The flag names the services, its error, and whether the
			// others' stacks were kept (report words them).
			if a := g.First.Args; !slices.Contains(a.Strs(0), "svc") || a.Bool(2) != tc.file || a.Str(3) != "profile svc: perf script: exit status 255" {
				t.Errorf("flag %+v does not say which services, whether the others' stacks were kept, and its error", g.First.Args)
			}
			if len(s.Profiles) != 1 {
				t.Fatalf("%d profile differences, want 1", len(s.Profiles))
			}
			if got := s.Profiles[0].Rounds; got != tc.rounds {
				t.Errorf("where the CPU goes over %d rounds, want %d", got, tc.rounds)
			}
		})
	}
}
