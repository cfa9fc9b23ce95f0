package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/tollperf/toll/plan"
)

// Spares are starts of a variant's services warmed ahead of their turn.
// A JVM's warm-up takes a minute or more and measures nothing, and most of
// it is waiting: for its compilation to settle, and for its cost to stop
// moving over windows of seconds. When the run expects more starts
// (Events.StartsAhead), the warm-up of one start also starts and warms the
// next ones, every variant's, all at once; at each new start a spare takes
// the place of the stopped services, warm already. Each spare has its own
// ports and its own telemetry sink, so that what it sends while it waits
// is never counted for the variant's current start, and it waits idle on
// the variant's CPUs, where each trial's record counts what it took
// (neighbours).

// maxSpares bounds the spares of each variant warmed at once.
const maxSpares = 3

// spareRoom is the largest share of the machine's CPUs that the services
// of the last warm-up may have used for the next to warm starts ahead
// beside its own. Spares double what a warm-up asks of the CPUs, and a
// warm-up that kept them busy already then settles none of its JVMs:
// five variants' JVMs warmed with their five spares on 2 CPUs all reached
// the 5-minute cap still compiling, and the trials measured JVMs that had
// not settled (CPU per request twice what it is). The first warm-up of a
// run warms no spare: nothing has measured its demand yet.
const spareRoom = 0.5

// spareKey names spare n of variant name while it warms, in the maps a
// warm-up reads by variant.
func spareKey(name string, n int) string { return name + "#" + strconv.Itoa(n) }

// startSpares starts the spares that the warm-up of owed's freshly
// started services warms beside them, when jvm (a JVM among them) and the
// run expects further starts, and returns a trial of each at its
// variant's first trial's load, for the warm-up to load. Each spare runs
// under its key (spareKey) in b.running until shelveSpares. A spare that
// cannot start is noted and stopped, and the warm-up goes on without it.
func (b *Backend) startSpares(ctx context.Context, owed []*plan.Trial, jvm bool) []*plan.Trial {
	n := b.sparesWanted(owed, jvm)
	if n == 0 {
		return nil
	}
	out, variant, err := b.launchSpares(ctx, owed, n, "")
	if err != nil {
		b.note(fmt.Sprintf("a start of %s ahead of its turn: %v; its next start begins and warms then", variant, err))
	}
	return out
}

// launchSpares starts n spares of each of owed's variants (startSpare), at
// idle priority on idleOn where it is set, each start's variants in a
// fresh order (spareOrder), and returns a trial of each at its variant's
// trial's load; at the first that cannot start, it returns those started
// so far with the variant and the error.
func (b *Backend) launchSpares(ctx context.Context, owed []*plan.Trial, n int, idleOn string) ([]*plan.Trial, string, error) {
	var out []*plan.Trial
	for k := 0; k < n && ctx.Err() == nil; k++ {
		for _, pt := range b.spareOrder(owed) {
			key, err := b.startSpare(ctx, pt.Variant, idleOn)
			if err != nil {
				return out, pt.Variant, err
			}
			sp := *pt
			sp.Variant, sp.Pair, sp.Index = key, "", 0
			out = append(out, &sp)
		}
	}
	return out, "", nil
}

// spareOrder returns owed in the order in which the next start of their
// variants begins, drawn from the run's seed and the starts they have had
// (each start adds to them), so that it is fresh at each start and the run
// reproducible. Services started one after another do not come to their
// start alike (which boots beside which), and plan shuffles the run's
// starts for it; begun always in the variants' order, the baseline's JVM
// would come first at every start ahead, and its start-up costs (JVM init)
// would differ from an identical twin's by that alone (docs/benchmarks.md,
// "Every variant at once, chosen by toll").
func (b *Backend) spareOrder(owed []*plan.Trial) []*plan.Trial {
	var starts uint64
	b.mu.Lock()
	for _, pt := range owed {
		starts += uint64(b.starts[pt.Variant])
	}
	b.mu.Unlock()
	out := slices.Clone(owed)
	r := rand.New(rand.NewPCG(uint64(b.seed), starts))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// sparesWanted returns how many spares of each of owed's variants to warm
// beside their warm-up: what the run expects (Events.StartsAhead), within
// what may run (sparesRoom), and none for services that must not run twice
// at once (a container, published ports, a load target without a port
// toll chose) or that are profiled; and none unless the last warm-up's
// services used less than spareRoom of the machine's CPUs.
func (b *Backend) sparesWanted(owed []*plan.Trial, jvm bool) int {
	if !jvm || b.events == nil || b.profilers != nil {
		return 0
	}
	n := b.events.StartsAhead()
	if n > 0 && !roomForSpares(b.warmShared, b.warmShare) {
		if b.warmShared && !b.roomNoted {
			b.roomNoted = true
			b.note(fmt.Sprintf("no start was warmed ahead of its turn: the last variant warm-up's services used %.0f%% of the machine's CPUs, and starts ahead are warmed beside one that used less than %.0f%%",
				100*b.warmShare, 100*spareRoom))
		}
		return 0
	}
	return b.sparesRoom(owed, n)
}

// sparesRoom returns how many of n spares of each of owed's variants may
// run: within maxSpares with those waiting already and what memory holds
// (half of what is available, each spare counted at twice what the
// variants' services take now), and none for services that must not run
// twice at once.
func (b *Backend) sparesRoom(owed []*plan.Trial, n int) int {
	for _, pt := range owed {
		b.mu.Lock()
		waiting := len(b.spares[pt.Variant])
		b.mu.Unlock()
		n = min(n, maxSpares-waiting)
		if !b.twice(pt.Variant) {
			return 0
		}
	}
	if n <= 0 {
		return 0
	}
	_, rss := b.servicesUse(owed)
	if b.machine != nil && rss > 0 {
		if m, err := b.machine.Sample(); err == nil {
			n = min(n, int(m.MemAvailable/2/(2*rss)))
		}
	}
	return max(n, 0)
}

// twice reports whether variant name's services may run twice at once: a
// second start binds ports of its own (the load target's port is one toll
// chose), and none runs in a container or publishes a port.
func (b *Backend) twice(name string) bool {
	v := b.variants[name]
	for _, svc := range v.Services {
		if svc.Image != "" || len(svc.Publish) > 0 {
			return false
		}
	}
	u, err := url.Parse(v.Target)
	return err == nil && u.Port() != "" && b.chosePort(name, u.Port())
}

// chosePort reports whether port is one toll gave variant name's
// placeholders (${port:NAME}), not one written in the scenario.
func (b *Backend) chosePort(name, port string) bool {
	p, err := strconv.Atoi(port)
	if err != nil {
		return false
	}
	for _, q := range b.variants[name].Ports {
		if q == p {
			return true
		}
	}
	return false
}

// startSpare resolves variant name again, with ports and a telemetry sink
// of its own, starts its services (at idle priority on idleOn where it is
// set), and runs them under their key in b.running.
func (b *Backend) startSpare(ctx context.Context, name, idleOn string) (string, error) {
	pool := &portPool{}
	defer pool.release()
	port, err := pool.take()
	if err != nil {
		return "", fmt.Errorf("telemetry sink: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	v, err := resolveVariant(b.s, name, pool, "http://"+addr, b.cfg.Self)
	if err != nil {
		return "", err
	}
	pool.release()
	n := b.nextStart(name)
	key := spareKey(name, n)
	sk, err := startSinkProcess(ctx, b.cfg.Self, key, addr, b.dir, fmt.Sprintf("%s.sink.%d.log", name, n), b.id)
	if err != nil {
		return "", err
	}
	var limit float64
	if cur := b.runningOf(name); cur != nil {
		limit = cur.cpuLimit
	}
	st, err := b.launchStart(ctx, name, n, v, limit, true, idleOn)
	if err != nil {
		closeSink(sk)
		return "", err
	}
	// The warm-up that started it warms it: none is owed at its turn.
	st.spareOf, st.sink, st.warmed = name, sk, true
	b.mu.Lock()
	b.running[key] = st
	b.mu.Unlock()
	return key, nil
}

// WarmStartsReady implements backend.StartsAhead: the spares that every
// variant has waiting, warmed.
func (b *Backend) WarmStartsReady() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	ready := -1
	for _, v := range b.s.Variants {
		if n := len(b.spares[v.Name]); ready < 0 || n < ready {
			ready = n
		}
	}
	return max(ready, 0)
}

// shelveSpares moves the warmed spares of trials from b.running to their
// variants' queues.
func (b *Backend) shelveSpares(trials []*plan.Trial) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, pt := range trials {
		st := b.running[pt.Variant]
		if st == nil {
			continue
		}
		delete(b.running, pt.Variant)
		b.spares[st.spareOf] = append(b.spares[st.spareOf], st)
	}
}

// spareReady reports whether a spare of variant name, started under CPU
// limit cpuLimit, waits warmed for its turn (promoteSpare would take it).
func (b *Backend) spareReady(name string, cpuLimit float64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readySpare(name, cpuLimit) != nil
}

// readySpare returns the oldest spare of variant name if it was started
// under CPU limit cpuLimit, or nil. Its caller holds b.mu.
func (b *Backend) readySpare(name string, cpuLimit float64) *started {
	if q := b.spares[name]; len(q) > 0 && q[0].cpuLimit == cpuLimit {
		return q[0]
	}
	return nil
}

// promoteSpare makes the oldest spare of variant name, started under the
// same CPU limit, its current start, with its sink the variant's, and
// reports whether there was one.
func (b *Backend) promoteSpare(name string, cpuLimit float64) bool {
	b.mu.Lock()
	st := b.readySpare(name, cpuLimit)
	if st == nil {
		b.mu.Unlock()
		return false
	}
	b.spares[name] = b.spares[name][1:]
	var settle string // the line that says it is warmed again
	if old := b.sinks[name]; old != nil {
		b.retired = append(b.retired, old)
	}
	b.sinks[name] = st.sink
	// A start launched at its turn later is resolved as this one, so
	// that it too exports to the sink that now counts for the variant,
	// not to the retired one.
	b.variants[name] = st.v
	st.spareOf, st.sink = "", nil
	// A start warmed beside the rounds waited there with the CPUs
	// widened for it (unwiden), and may have skipped its rate phase
	// there (skipsRateBeside).
	beside := st.unwiden != nil
	skipped := beside && st.skippedRate
	w, rateCalls := st.warmup, b.rateCalls[name]
	why := turnWarmup(w, beside, skipped, rateCalls)
	if skipped && why == turnNone && w != nil && w.rec != nil {
		settle = fmt.Sprintf("%s: its start warmed ahead came to its turn quiet (%s), sent %d requests at the trials' own load beside the rounds, as many as its first warm-up's rate phase sent or more (%d): no warm-up at its turn",
			name, describeRates(w.rec.JITMsPerS), w.ownLoad, rateCalls)
	}
	if why != turnNone {
		came, how := "came to its turn", "warmed from its warm-up's rate phase on, which it cannot take beside the rounds"
		switch {
		case why == turnBusy|turnRate:
			came, how = "came to its turn still compiling", "warmed at the trials' load until its compilers' queue is worked off, then from its warm-up's rate phase on, which it cannot take beside the rounds"
		case why == turnBusy:
			came, how = "came to its turn still compiling", "warmed again at the trials' load"
		}
		st.warmed, st.settle, st.warmup = false, why, nil
		if why&turnRate != 0 {
			how += fmt.Sprintf(" (it was sent %d requests at the trials' own load there, its first warm-up's rate phase %d)", w.ownLoad, rateCalls)
		}
		settle = fmt.Sprintf("%s: its start warmed ahead %s (%s): %s, on the warm-up CPUs, until its compilers are no longer busy",
			name, came, describeRates(w.rec.JITMsPerS), how)
	}
	if w := st.warmup; w != nil {
		// Its trial's timeline begins now, its warm-up long over: the
		// warm-up's requests, and the telemetry they sent to the
		// spare's own sink while it waited, are not the trial's.
		w.start, w.completed, w.telemetry, w.otherLoad = time.Now(), 0, nil, false
	}
	b.running[name] = st
	unwiden := st.unwiden
	st.unwiden = nil
	b.mu.Unlock()
	if settle != "" {
		b.say(settle)
	}
	// A spare warmed beside the rounds waited at idle priority on the
	// CPUs beside them: its trials run on its own CPUs at its own priority.
	if unwiden != nil {
		if err := unwiden(); err != nil {
			b.note(fmt.Sprintf("%s: back on its own CPUs after its warm-up ahead of its turn: %v", name, err))
		}
	}
	return true
}

// turnWarm is why a start warmed ahead of its turn is warmed again at it:
// none, or one or both of the reasons below. Starts warmed again together
// take the phases that every reason among theirs asks for (warmupPhases).
type turnWarm uint8

const (
	turnNone turnWarm = 0
	// turnRate: it was warmed beside the rounds without its warm-up's
	// rate phase (warmPhases), and takes that phase now, with the CPUs
	// the first warm-up had, before its rounds, where the calls that
	// bring its JIT to compile again would otherwise come minutes into
	// them. One whose compilers went quiet beside the rounds after it
	// was sent as many requests at the trials' own load as the first
	// warm-up's rate phase sent has had those calls: it owes none.
	turnRate turnWarm = 1
	// turnBusy: beside the rounds, at idle priority, its compilers
	// waited for a CPU, and its cost held still while they did, which
	// ended its warm-up: a spare of the Java agents' ended so at
	// 470–5,400 ms/s and read their CPU per request at twice its settled
	// value for its first 35 rounds. It works that queue off at the
	// trials' load before its rounds, with the CPUs the first warm-up
	// had, and then takes the rate phase it owes, if any (turnRate too).
	turnBusy turnWarm = 2
)

// turnWarmup returns why a start warmed ahead of its turn, as w tells, is
// warmed again at it; beside says it was warmed beside the rounds, and
// skipped that its warm-up skipped a rate phase there, where the first
// warm-up's rate phase sent its variant rateCalls requests. A spare
// warmed with a start's warm-up had that warm-up's CPUs, and one that
// reached its warm-up's cap had what the run allowed, unless it owes its
// rate phase: then its queue is worked off before that phase.
func turnWarmup(w *variantWarmup, beside, skipped bool, rateCalls uint64) turnWarm {
	if w == nil || w.rec == nil {
		return turnNone
	}
	var why turnWarm
	if skipped && (rateCalls == 0 || w.ownLoad < rateCalls || compilersBusy(w.rec.JITMsPerS)) {
		why = turnRate
	}
	if beside && compilersBusy(w.rec.JITMsPerS) && (w.rec.CostSteady || skipped) {
		why |= turnBusy
	}
	return why
}

// stopSpare stops a spare that never took its turn, with its sink, and
// removes its cgroups: it measured nothing, and tells the orchestrator
// nothing.
func (b *Backend) stopSpare(st *started) error {
	err := b.halt(st)
	if st.sink != nil {
		closeSink(st.sink)
	}
	if err != nil {
		return fmt.Errorf("stop a start of %s ahead of its turn: %w", st.spareOf, err)
	}
	return nil
}

// closeSink stops sk, waiting at most its grace.
func closeSink(sk *sinkProcess) {
	ctx, cancel := context.WithTimeout(context.Background(), sinkStopGrace)
	defer cancel()
	sk.Close(ctx)
}

// roomForSpares reports whether a warm-up may warm starts ahead beside its
// own: the last one's services used share of the machine's CPUs (known:
// one has run), less than spareRoom.
func roomForSpares(known bool, share float64) bool {
	return known && share < spareRoom
}

// servicesUse returns what the services of owed's variants have used so
// far: CPU-seconds, and the resident memory they hold now.
func (b *Backend) servicesUse(owed []*plan.Trial) (cpu float64, rss uint64) {
	for _, pt := range owed {
		st := b.runningOf(pt.Variant)
		if st == nil || st.group == nil {
			continue
		}
		for i, svc := range st.group.Services() {
			if tree := serviceProcesses(st, i, svc.Pid()); tree != nil {
				if smp, err := tree.Sample(); err == nil {
					cpu += smp.CPU.Seconds()
					rss += smp.RSS
				}
			}
		}
	}
	return cpu, rss
}

// measureWarmShare keeps the share of the machine's CPUs that the
// services of owed's variants used since a warm-up began, when they had
// used cpu0 CPU-seconds (servicesUse).
func (b *Backend) measureWarmShare(owed []*plan.Trial, cpu0 float64, began time.Time) {
	if b.machine == nil {
		return
	}
	m, err := b.machine.Sample()
	cpu, _ := b.servicesUse(owed)
	if el := time.Since(began).Seconds(); err == nil && len(m.PerCPU) > 0 && el > 0 {
		b.warmShare, b.warmShared = max(cpu-cpu0, 0)/el/float64(len(m.PerCPU)), true
	}
}
