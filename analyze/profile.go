package analyze

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	pprof "github.com/google/pprof/profile"
	"github.com/tollperf/toll/probe/profile"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/stats"
)

// ProfileDiff is where one variant's added CPU per request goes at one
// load step: the difference between its profiles and the baseline's, round
// by round, per function, per package and per origin, each in ms of CPU per
// request with its 95% interval over the paired rounds.
type ProfileDiff struct {
	Step    int    `json:"step"`
	Variant string `json:"variant"`
	// Rounds is the number of rounds with a profile on both sides.
	Rounds int `json:"rounds"`
	// File and BaselineFile are the variant's and the baseline's profiles
	// per request, relative to the results directory (pprof -diff_base).
	File         string `json:"file"`
	BaselineFile string `json:"baseline_file"`
	// Total is the profiled CPU per request: the baseline's and the
	// variant's means, and the change with its interval. Every row's
	// share is of Total.Delta.
	Total ProfileRow `json:"total"`
	// Functions, Packages and Origins are the rows by the sampled leaf's
	// function, its package, and its origin (OriginAgent and the others),
	// largest added CPU first. Functions and Packages keep the
	// MaxProfileRows largest changes either way.
	Functions []ProfileRow `json:"functions"`
	Packages  []ProfileRow `json:"packages"`
	Origins   []ProfileRow `json:"origins"`
	// Inclusive are the rows by every function on the sampled stacks:
	// the CPU spent in a function and in what it calls (pprof's cum), so
	// that a cost injected in a function that calls others is found under
	// its name. Their shares overlap, and do not add up.
	Inclusive []ProfileRow `json:"inclusive"`
	// Charged and ChargedPackages are the rows by the code charged with
	// each sample (chargeOf): the first function from the leaf up that is
	// not a runtime's, the kernel's, a system library's or a standard
	// library's, so that the allocations, system calls and library calls
	// a function makes count for it, and Go's background GC for the code
	// that allocated; what no function owns (the scheduler, interrupts,
	// a JVM's compiler and GC threads) is a row named for its origin in
	// parentheses. They add up to Total: the answer to "which code made
	// the variant cost more?".
	Charged         []ProfileRow `json:"charged"`
	ChargedPackages []ProfileRow `json:"charged_packages"`
	// Causes are Charged's rows by origin: how much of the change the
	// agent's own code and what it asked of the runtime, the kernel and
	// its libraries explain (OriginAgent, OriginNewCode), the
	// application's, and the runtime's and kernel's work that no code
	// asked for. They add up to Total.
	Causes []ProfileRow `json:"causes"`
	// Flame is the variant's stacks, from the root down, each node with
	// both sides' CPU per request in it and what it calls (the mean over
	// the paired rounds), for a differential flame graph; nodes under
	// FlameMinShare of the variant's total are left out.
	Flame *FlameNode `json:"flame,omitempty"`
}

// FlameNode is one frame of a differential flame graph: the CPU per
// request, in ms, of the stacks through it on each side, and of its
// function through all its stacks.
type FlameNode struct {
	Name     string  `json:"name"`
	Baseline float64 `json:"baseline_ms"`
	Variant  float64 `json:"variant_ms"`
	// FunctionBaseline and FunctionVariant are the CPU per request of the
	// frame's function and what it calls, on every stack it is on (each
	// sample counted once), on each side: its row of Inclusive. A frame is
	// coloured by their change, not by its own stack's, because an agent
	// that wraps a handler moves all the application's stacks under its
	// frames: matched stack by stack, the application's unchanged work
	// would read as entirely added on the wrapped stacks and entirely gone
	// from the others.
	FunctionBaseline float64      `json:"function_baseline_ms"`
	FunctionVariant  float64      `json:"function_variant_ms"`
	Children         []*FlameNode `json:"children,omitempty"`
}

// FlameMinShare is the share of the variant's profiled total below which
// a flame graph's node is left out.
const FlameMinShare = 0.005

// ProfileRow is one function's (package's, origin's) own CPU per request,
// in ms: the CPU spent in it, not in what it calls.
type ProfileRow struct {
	Name string `json:"name"`
	// Origin is the row's origin (OriginApplication and the others);
	// for an origin's row, itself.
	Origin   string  `json:"origin"`
	Baseline float64 `json:"baseline_ms"`
	Variant  float64 `json:"variant_ms"`
	// Delta is the mean over rounds of the variant's minus the
	// baseline's, with its 95% t interval (absent with one round).
	Delta  float64  `json:"delta_ms"`
	CILow  *float64 `json:"ci_low_ms,omitempty"`
	CIHigh *float64 `json:"ci_high_ms,omitempty"`
	// Significant is set when the interval excludes zero.
	Significant bool `json:"significant"`
	// Direction is where the interval lies against no change, and
	// HalfWidth half its width in ms (absent without an interval).
	Direction Direction `json:"direction,omitempty"`
	HalfWidth *float64  `json:"half_width_ms,omitempty"`
	// SharePct is Delta as a percentage of the total profiled change.
	SharePct float64 `json:"share_pct"`
}

// MaxProfileRows is how many functions and packages a ProfileDiff keeps.
const MaxProfileRows = 50

// The origins of sampled CPU: whose code a sample's leaf is.
const (
	// OriginAgent prefixes an agent's own code: "agent: go.opentelemetry.io".
	OriginAgent = "agent: "
	// OriginGC is a garbage collector's work (a Go GC worker or assist, a
	// JVM's GC threads).
	OriginGC = "runtime: GC"
	// OriginJIT is a JVM's JIT compiler threads.
	OriginJIT = "runtime: JIT"
	// OriginRuntime is the rest of a language runtime (Go's runtime
	// package, libjvm).
	OriginRuntime = "runtime: other"
	// OriginKernel is the kernel's code.
	OriginKernel = "kernel"
	// OriginApplication is everything else.
	OriginApplication = "application"
)

// agentPrefixes name the agents' code, as Go, Java and Python name it.
var agentPrefixes = []string{"go.opentelemetry.io/", "io.opentelemetry.", "co.elastic.apm.", "datadog.",
	"net.bytebuddy.", "io/opentelemetry/", "co/elastic/apm/", "datadog/", "net/bytebuddy/", "opentelemetry.", "ddtrace.", "elasticapm."}

// gcFunctions are Go runtime functions whose callees are garbage
// collection.
var gcFunctions = []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.gcDrain", "runtime.bgsweep",
	"runtime.bgscavenge", "runtime.markroot", "runtime.gcStart", "runtime.GC"}

// originOf returns the origin of a sample whose stack is locs (leaf
// first), on the thread named thread.
func originOf(locs []*pprof.Location, thread string) string {
	for _, p := range []string{"GC Thread", "G1 ", "GC task", "ZWorker", "Shenandoah"} {
		if strings.HasPrefix(thread, p) {
			return OriginGC
		}
	}
	for _, p := range []string{"C1 CompilerThre", "C2 CompilerThre", "C1 Compiler", "C2 Compiler"} {
		if strings.HasPrefix(thread, p) {
			return OriginJIT
		}
	}
	if thread == "VM Thread" && vmCollects(locs) {
		return OriginGC
	}
	for _, l := range locs {
		for _, ln := range l.Line {
			for _, g := range gcFunctions {
				if ln.Function.Name == g || strings.HasPrefix(ln.Function.Name, g+".") {
					return OriginGC
				}
			}
		}
	}
	if len(locs) == 0 || len(locs[0].Line) == 0 {
		return OriginApplication
	}
	fn := locs[0].Line[0].Function
	for _, p := range agentPrefixes {
		if strings.HasPrefix(fn.Name, p) {
			return OriginAgent + strings.TrimRight(p, "./")
		}
	}
	if (profile.Frame{Module: fn.Filename}).Kernel() {
		return OriginKernel
	}
	if strings.HasPrefix(fn.Name, "runtime.") || strings.HasPrefix(fn.Filename, "libjvm") {
		return OriginRuntime
	}
	return OriginApplication
}

// vmCollects reports whether a JVM's VM Thread, whose stack is locs, is
// running a garbage collection (VM_G1CollectForAllocation,
// VM_GenCollectForAllocation, ...): G1's and the serial collector's pauses
// run there, beside the GC threads.
func vmCollects(locs []*pprof.Location) bool {
	for _, l := range locs {
		for _, ln := range l.Line {
			if n := ln.Function.Name; strings.HasPrefix(n, "VM_") && (strings.Contains(n, "Collect") || strings.Contains(n, "GC")) {
				return true
			}
		}
	}
	return false
}

// packageOf returns the package of the function named name in module: a
// Go function's import path (go.opentelemetry.io/otel/sdk/trace), a Java
// method's package (io.opentelemetry.sdk.trace), a Python function's
// module (flask.app), "kernel", or the module for code with neither.
func packageOf(name, module string) string {
	if (profile.Frame{Module: module}).Kernel() {
		return "kernel"
	}
	if strings.HasPrefix(name, "[") {
		return module
	}
	if i := strings.LastIndex(name, "/"); i >= 0 {
		if j := strings.Index(name[i:], "."); j >= 0 {
			return name[:i+j]
		}
		return name
	}
	if strings.Contains(name, "::") || strings.Contains(name, "(") && !strings.Contains(name, ".") {
		return module // C++ or C
	}
	if mod, _, ok := strings.Cut(name, ":"); ok && mod != "" {
		return mod // Python: flask.app:wsgi_app
	}
	parts := strings.Split(name, ".")
	if len(parts) >= 4 && !strings.Contains(name, "(") {
		return strings.Join(parts[:len(parts)-2], ".") // Java: drop Class.method
	}
	if len(parts) >= 2 {
		return parts[0] // Go's standard library: runtime.mallocgc
	}
	return module
}

// trialProfile is one trial's profile held to its analysis window: own CPU
// per request in ms by function, package and origin, and its samples per
// request.
type trialProfile struct {
	total                       float64
	functions, packages, origin map[string]float64
	inclusive                   map[string]float64
	paths                       map[string]float64 // root-first frames joined by NUL → ms
	origins                     map[string]string  // function → origin
	perRequest                  *pprof.Profile
	// held are the samples in the window, for chargeTrial.
	held []heldSample
}

// heldSample is one sample of a trialProfile: its stack (leaf first), its
// thread and its CPU per request in ms.
type heldSample struct {
	locs   []*pprof.Location
	thread string
	ms     float64
}

// AddProfiles adds to s, for every variant at every load step whose trials
// were profiled, where its added CPU per request goes (Summary.Profiles),
// read from trials' profiles through read (record.Dir.ReadProfile), and
// the variants' profiles per request to write (Summary.ProfileFiles). A
// profile missing on either side of a round is an error that names it; a
// trial whose record says why it has none is left out, with a warning.
func AddProfiles(s *Summary, trials []*record.Trial, read func(name string) (*pprof.Profile, error)) error {
	byIndex := map[int]*record.Trial{}
	profiled := false
	for _, t := range trials {
		byIndex[t.Index] = t
		profiled = profiled || t.Profile != nil
	}
	if !profiled {
		return nil
	}
	type key struct {
		step    int
		variant string
	}
	rounds := map[key]map[int]*trialProfile{}
	why := map[string]error{} // by variant: why a trial of it has no profile
	for _, tc := range s.Trials {
		t := byIndex[tc.Index]
		if tc.Excluded || t == nil || t.Idle {
			continue
		}
		// trialErr is an error of the trial, format following its name.
		trialErr := func(format string, args ...any) error {
			return fmt.Errorf("trial %d (%s, round %d)"+format, append([]any{t.Index, t.Variant, t.Round}, args...)...)
		}
		switch {
		case t.Profile == nil:
			return trialErr(" has no profile, while other trials of the run have: profile every variant's services alike")
		case t.Profile.File == "":
			// The trial's profile flag says why it has none.
			if why[t.Variant] == nil {
				why[t.Variant] = trialErr(": %s", oneLine(t.Profile.Error))
			}
			continue
		}
		p, err := read(t.Profile.File)
		if err != nil {
			return trialErr(": %w", err)
		}
		tp, err := profileOf(p, t, tc.Window)
		if err != nil {
			return trialErr(": %w", err)
		}
		if tp == nil {
			continue // no request completed in the window
		}
		k := key{t.Step, t.Variant}
		if rounds[k] == nil {
			rounds[k] = map[int]*trialProfile{}
		}
		rounds[k][t.Round] = tp
	}
	for _, st := range s.Steps {
		base := rounds[key{st.Index, s.Baseline}]
		baseFile := record.VariantProfileFile(s.Baseline, st.Index, len(s.Steps))
		if len(base) > 0 {
			s.ProfileFiles = append(s.ProfileFiles, ProfileFile{Name: baseFile, Profile: mergeRounds(base)})
		}
		for _, v := range s.Variants {
			if v == s.Baseline {
				continue
			}
			vr := rounds[key{st.Index, v}]
			if len(vr) == 0 && len(base) == 0 {
				continue
			}
			var paired []int
			for r := range vr {
				if _, ok := base[r]; ok {
					paired = append(paired, r)
				}
			}
			sort.Ints(paired)
			if len(paired) == 0 {
				err := fmt.Errorf("%s at %s: no round with a profile of both it and the baseline %s", v, st.Label(), s.Baseline)
				for _, n := range []string{v, s.Baseline} {
					if why[n] != nil {
						err = fmt.Errorf("%w (%v)", err, why[n])
					}
				}
				return err
			}
			file := record.VariantProfileFile(v, st.Index, len(s.Steps))
			s.ProfileFiles = append(s.ProfileFiles, ProfileFile{Name: file, Profile: mergeRounds(vr)})
			s.Profiles = append(s.Profiles, diffProfiles(st.Index, v, file, baseFile, base, vr, paired))
		}
	}
	return nil
}

// ProfileFile is a profile per request for the reports to write.
type ProfileFile struct {
	Name    string
	Profile *pprof.Profile
}

// profileOf holds p, the profile of trial t, to the analysis window w and
// divides it by the requests completed there; nil when none did.
func profileOf(p *pprof.Profile, t *record.Trial, w Window) (*trialProfile, error) {
	var completed uint64
	for _, iv := range t.Intervals {
		if w.holdsInterval(iv.T) {
			completed += iv.Completed
		}
	}
	if completed == 0 {
		return nil, nil
	}
	cpu := -1
	for i, st := range p.SampleType {
		if st.Type == profile.CPUType && st.Unit == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("profile has no %s/nanoseconds values", profile.CPUType)
	}
	perMS := 1 / (float64(completed) * 1e6)
	tp := &trialProfile{paths: map[string]float64{}, inclusive: map[string]float64{}, functions: map[string]float64{}, packages: map[string]float64{}, origin: map[string]float64{}, origins: map[string]string{}}
	q := p.Copy()
	q.Sample = q.Sample[:0]
	for _, smp := range p.Sample {
		secs := smp.NumLabel[profile.LabelSecond]
		if len(secs) != 1 || !w.holdsInterval(float64(secs[0])) {
			continue
		}
		ms := float64(smp.Value[cpu]) * perMS
		tp.total += ms
		thread := ""
		if th := smp.Label[profile.LabelThread]; len(th) == 1 {
			thread = th[0]
		}
		origin := originOf(smp.Location, thread)
		fn, module := "[no stack]", ""
		if len(smp.Location) > 0 && len(smp.Location[0].Line) > 0 {
			fn, module = smp.Location[0].Line[0].Function.Name, smp.Location[0].Line[0].Function.Filename
		}
		tp.functions[fn] += ms
		if _, ok := tp.origins[fn]; !ok {
			tp.origins[fn] = origin
		}
		pkg := packageOf(fn, module)
		tp.packages[pkg] += ms
		if _, ok := tp.origins["\x00"+pkg]; !ok {
			tp.origins["\x00"+pkg] = origin
		}
		tp.origin[origin] += ms
		tp.held = append(tp.held, heldSample{locs: smp.Location, thread: thread, ms: ms})
		path := "all"
		tp.paths[path] += ms
		for i := len(smp.Location) - 1; i >= 0; i-- {
			for j := len(smp.Location[i].Line) - 1; j >= 0; j-- {
				path += "\x00" + smp.Location[i].Line[j].Function.Name
				tp.paths[path] += ms
			}
		}
		seen := map[string]bool{}
		for _, l := range smp.Location {
			for _, ln := range l.Line {
				if n := ln.Function.Name; !seen[n] {
					seen[n] = true
					tp.inclusive[n] += ms
				}
			}
		}
		c := *smp
		c.NumLabel, c.NumUnit = nil, nil
		c.Value = []int64{smp.Value[cpu]}
		q.Sample = append(q.Sample, &c)
	}
	q.SampleType = []*pprof.ValueType{p.SampleType[cpu]}
	q.DefaultSampleType = ""
	merged, err := pprof.Merge([]*pprof.Profile{q})
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	merged.Scale(1 / float64(completed))
	merged.Comments = append(merged.Comments, "CPU per request: each trial's samples divided by the requests it completed")
	tp.perRequest = merged
	return tp, nil
}

// mergeRounds is the mean of rounds' profiles per request.
func mergeRounds(rounds map[int]*trialProfile) *pprof.Profile {
	var ps []*pprof.Profile
	for _, tp := range rounds {
		p := tp.perRequest.Copy()
		p.Scale(1 / float64(len(rounds)))
		ps = append(ps, p)
	}
	m, err := pprof.Merge(ps)
	if err != nil {
		return ps[0]
	}
	m.DurationNanos = 0 // the profile is per request, not of a span of time
	return m
}

// diffProfiles is variant v's ProfileDiff against base over the paired
// rounds.
func diffProfiles(step int, v, file, baseFile string, base, vari map[int]*trialProfile, paired []int) ProfileDiff {
	d := ProfileDiff{Step: step, Variant: v, Rounds: len(paired), File: file, BaselineFile: baseFile}
	d.Total = profileRow("total", "", paired, func(r int) (float64, float64) { return base[r].total, vari[r].total })
	d.Total.SharePct = 100
	rows := func(of func(*trialProfile) map[string]float64, originKey func(string) string) []ProfileRow {
		return rowsOf(d.Total.Delta, paired, func(r int) (map[string]float64, map[string]float64) {
			return of(base[r]), of(vari[r])
		}, func(n string) string {
			if originKey == nil {
				return n
			}
			origin := ""
			for _, r := range paired {
				if o, ok := vari[r].origins[originKey(n)]; ok {
					return o
				}
				if o, ok := base[r].origins[originKey(n)]; ok {
					origin = o
				}
			}
			return origin
		})
	}
	d.Functions = largest(rows(func(tp *trialProfile) map[string]float64 { return tp.functions }, func(n string) string { return n }))
	d.Packages = largest(rows(func(tp *trialProfile) map[string]float64 { return tp.packages }, func(n string) string { return "\x00" + n }))
	d.Origins = rows(func(tp *trialProfile) map[string]float64 { return tp.origin }, nil)
	inclusive := rows(func(tp *trialProfile) map[string]float64 { return tp.inclusive }, func(n string) string { return n })
	d.Flame = flameOf(base, vari, paired, inclusive)
	known := map[string]bool{}
	for _, tp := range base {
		for _, h := range tp.held {
			for _, l := range h.locs {
				for _, ln := range l.Line {
					known[packageOf(ln.Function.Name, ln.Function.Filename)] = true
				}
			}
		}
	}
	chargedBase, chargedVari := map[int]charged{}, map[int]charged{}
	for _, r := range paired {
		chargedBase[r] = chargeTrial(base[r], nil)
		chargedVari[r] = chargeTrial(vari[r], func(n string) bool { return known[n] })
	}
	chargedRows := func(of func(charged) map[string]float64, key func(string) string) []ProfileRow {
		return rowsOf(d.Total.Delta, paired, func(r int) (map[string]float64, map[string]float64) {
			return of(chargedBase[r]), of(chargedVari[r])
		}, func(n string) string {
			if key == nil {
				return n
			}
			for _, r := range paired {
				if o, ok := chargedVari[r].originOf[key(n)]; ok {
					return o
				}
			}
			for _, r := range paired {
				if o, ok := chargedBase[r].originOf[key(n)]; ok {
					return o
				}
			}
			return ""
		})
	}
	d.Charged = largest(chargedRows(func(c charged) map[string]float64 { return c.functions }, func(n string) string { return n }))
	d.ChargedPackages = largest(chargedRows(func(c charged) map[string]float64 { return c.packages }, func(n string) string { return "\x00" + n }))
	d.Causes = chargedRows(func(c charged) map[string]float64 { return c.origins }, nil)
	d.Inclusive = largest(inclusive)
	return d
}

// rowsOf are the rows of every name in either side's values over the
// paired rounds (at returns round r's baseline and variant values by
// name), each with its origin (originOf) and its share of total, largest
// change first.
func rowsOf(total float64, paired []int, at func(r int) (base, vari map[string]float64), originOf func(name string) string) []ProfileRow {
	names := map[string]bool{}
	for _, r := range paired {
		b, v := at(r)
		for n := range b {
			names[n] = true
		}
		for n := range v {
			names[n] = true
		}
	}
	var out []ProfileRow
	for n := range names {
		row := profileRow(n, originOf(n), paired, func(r int) (float64, float64) {
			b, v := at(r)
			return b[n], v[n]
		})
		if total != 0 {
			row.SharePct = 100 * row.Delta / total
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b ProfileRow) int {
		if a.Delta != b.Delta {
			if a.Delta > b.Delta {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// largest keeps the MaxProfileRows rows of rows (sorted by Delta, largest
// first) whose Delta is largest either way, in their order.
func largest(rows []ProfileRow) []ProfileRow {
	if len(rows) <= MaxProfileRows {
		return rows
	}
	mags := make([]float64, len(rows))
	for i, r := range rows {
		mags[i] = max(r.Delta, -r.Delta)
	}
	sorted := slices.Clone(mags)
	slices.Sort(sorted)
	cut := sorted[len(sorted)-MaxProfileRows]
	var out []ProfileRow
	for i, r := range rows {
		if mags[i] >= cut && len(out) < MaxProfileRows {
			out = append(out, r)
		}
	}
	return out
}

// profileRow is the row of name over the paired rounds, at returning the
// baseline's and the variant's value in each.
func profileRow(name, origin string, rounds []int, at func(r int) (base, vari float64)) ProfileRow {
	var bs, vs, ds []float64
	for _, r := range rounds {
		b, v := at(r)
		bs, vs, ds = append(bs, b), append(vs, v), append(ds, v-b)
	}
	iv := stats.TInterval(ds)
	row := ProfileRow{Name: name, Origin: origin, Baseline: stats.Mean(bs), Variant: stats.Mean(vs), Delta: iv.Mean, Significant: iv.HasCI && iv.Excludes}
	if iv.HasCI {
		lo, hi := iv.Low, iv.High
		row.CILow, row.CIHigh = &lo, &hi
	}
	row.Settle()
	return row
}

// flameOf builds the differential flame graph of vari against base over
// the paired rounds, each frame with its function's row of inclusive (all
// of them, before the largest are kept).
func flameOf(base, vari map[int]*trialProfile, paired []int, inclusive []ProfileRow) *FlameNode {
	b, v := map[string]float64{}, map[string]float64{}
	for _, r := range paired {
		for p, ms := range base[r].paths {
			b[p] += ms / float64(len(paired))
		}
		for p, ms := range vari[r].paths {
			v[p] += ms / float64(len(paired))
		}
	}
	fn := make(map[string]ProfileRow, len(inclusive))
	for _, row := range inclusive {
		fn[row.Name] = row
	}
	min := FlameMinShare * max(v["all"], b["all"])
	root := &FlameNode{Name: "all", Baseline: b["all"], Variant: v["all"], FunctionBaseline: b["all"], FunctionVariant: v["all"]}
	nodes := map[string]*FlameNode{"all": root}
	var paths []string
	for p := range v {
		paths = append(paths, p)
	}
	for p := range b {
		if _, ok := v[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths) // a parent's path sorts before its children's
	for _, p := range paths {
		if p == "all" || max(v[p], b[p]) < min {
			continue
		}
		i := strings.LastIndexByte(p, 0)
		parent, ok := nodes[p[:i]]
		if !ok {
			continue
		}
		name := p[i+1:]
		n := &FlameNode{Name: name, Baseline: b[p], Variant: v[p], FunctionBaseline: fn[name].Baseline, FunctionVariant: fn[name].Variant}
		parent.Children = append(parent.Children, n)
		nodes[p] = n
	}
	return root
}
