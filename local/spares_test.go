package local

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollperf/toll/cgroup"
	"github.com/tollperf/toll/container"
	"github.com/tollperf/toll/launch"
	"github.com/tollperf/toll/pin"
	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/record"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/sink"
	"github.com/tollperf/toll/variant"
	"golang.org/x/sys/unix"
)

// TestTwice checks which variants a spare start may run beside: those
// whose load target's port toll chose, with no container and no published
// port; a port written in the scenario would be bound twice.
func TestTwice(t *testing.T) {
	chosen := map[string]int{"app": 31000}
	tests := []struct {
		name string
		v    variant.Variant
		want bool
	}{
		{"a port toll chose", variant.Variant{Target: "http://127.0.0.1:31000", Ports: chosen,
			Services: []variant.Service{{}}}, true},
		{"a path after the port", variant.Variant{Target: "http://127.0.0.1:31000/api", Ports: chosen,
			Services: []variant.Service{{}}}, true},
		{"a port written in the scenario", variant.Variant{Target: "http://127.0.0.1:8080", Ports: chosen,
			Services: []variant.Service{{}}}, false},
		{"no port", variant.Variant{Target: "http://localhost/", Ports: chosen,
			Services: []variant.Service{{}}}, false},
		{"a container", variant.Variant{Target: "http://127.0.0.1:31000", Ports: chosen,
			Services: []variant.Service{{Service: scenario.Service{Image: "app:1"}}}}, false},
		{"a published port", variant.Variant{Target: "http://127.0.0.1:31000", Ports: chosen,
			Services: []variant.Service{{Publish: []container.Port{{Host: 31000, Container: 80}}}}}, false},
	}
	for _, tt := range tests {
		v := tt.v
		b := &Backend{variants: map[string]*variant.Variant{"x": &v}}
		if got := b.twice("x"); got != tt.want {
			t.Errorf("%s: twice %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRoomForSpares: starts are warmed ahead only beside a warm-up whose
// last one left the CPUs room for twice its demand, and never at the
// first, whose demand nothing has measured.
func TestRoomForSpares(t *testing.T) {
	for _, tt := range []struct {
		known bool
		share float64
		want  bool
	}{
		{false, 0, false},
		{true, 0, true},
		{true, 0.2, true},
		{true, 0.49, true},
		{true, 0.5, false},
		{true, 0.95, false},
	} {
		if got := roomForSpares(tt.known, tt.share); got != tt.want {
			t.Errorf("roomForSpares(%v, %v) = %v, want %v", tt.known, tt.share, got, tt.want)
		}
	}
}

// TestSkipsRateBeside: starts warmed beside the rounds take their
// warm-up's rate phase there after a warm-up that left the CPUs mostly
// idle, and at their turn after one that kept them busy or before any has
// run; a warm-up with no rate phase has none to skip.
func TestSkipsRateBeside(t *testing.T) {
	until := &scenario.WarmupUntil{JITBelow: scenario.Duration(5 * time.Millisecond), Over: scenario.Duration(10 * time.Second)}
	auto := &scenario.Scenario{Load: scenario.Load{VariantWarmupAuto: true, VariantWarmupUntil: until}}
	users := &scenario.Scenario{Load: scenario.Load{VariantWarmupUsers: 4, VariantWarmupUntil: until}}
	for _, tt := range []struct {
		name  string
		s     *scenario.Scenario
		jvm   bool
		known bool
		share float64
		want  bool
	}{
		{"a light JVM's warm-up", auto, true, true, 0.3, false},
		{"a warm-up that kept the CPUs busy", auto, true, true, 0.8, true},
		{"at the line", auto, true, true, spareRoom, true},
		{"no warm-up measured yet", auto, true, false, 0, true},
		{"no JVM: no rate phase", auto, false, true, 0.8, false},
		{"the scenario's users only", users, true, true, 0.8, false},
	} {
		if got := skipsRateBeside(tt.s, tt.jvm, tt.known, tt.share); got != tt.want {
			t.Errorf("%s: skipsRateBeside = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestQuietPhase: a start warmed again at its turn counts its cost as
// steady only while its compilers are not busy in every phase, one warmed
// beside the rounds in its last (the trials' own load), a first warm-up
// in none.
func TestQuietPhase(t *testing.T) {
	for _, tt := range []struct {
		name      string
		turn      turnWarm
		beside    bool
		n, phases int
		want      bool
	}{
		{"a first warm-up's last phase", turnNone, false, 2, 3, false},
		{"beside the rounds, the users", turnNone, true, 0, 2, false},
		{"beside the rounds, the trials' own load", turnNone, true, 1, 2, true},
		{"at its turn, the rate", turnRate, false, 0, 2, true},
		{"at its turn, the trials' own load", turnBusy, false, 0, 1, true},
	} {
		if got := quietPhase(tt.turn, tt.beside, tt.n, tt.phases); got != tt.want {
			t.Errorf("%s: quietPhase = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestKeepRateCalls: what a warm-up's rate phase sent is kept by variant,
// a spare's as its variant's, the most of any of its starts; a warm-up
// without a rate phase keeps none.
func TestKeepRateCalls(t *testing.T) {
	b := New(Options{Self: "toll"})
	b.running = map[string]*started{"agent#1": {spareOf: "agent"}}
	owed := []*plan.Trial{{Variant: "base"}, {Variant: "agent"}, {Variant: "agent#1"}}
	users := warmupPhase{done: []uint64{5000, 5000, 5000}}
	rate := warmupPhase{done: []uint64{8400, 7000, 7600}, rate: true}
	own := warmupPhase{done: []uint64{900, 900, 900}}
	b.keepRateCalls(owed, []warmupPhase{users, rate, own})
	if want := map[string]uint64{"base": 8400, "agent": 7600}; !maps.Equal(b.rateCalls, want) {
		t.Errorf("rateCalls = %v, want %v", b.rateCalls, want)
	}
	b.keepRateCalls(owed, []warmupPhase{users, own})
	if len(b.rateCalls) != 0 {
		t.Errorf("after a warm-up without a rate phase, rateCalls = %v, want none", b.rateCalls)
	}
}

// TestInPlaceOfRate: the last phase of a start warmed beside the rounds
// without its rate phase is sent, before it may end, as many requests as
// its variant's rate phase was sent in the last warm-up with the CPUs to
// itself; a variant whose warm-up had none waits for no count.
func TestInPlaceOfRate(t *testing.T) {
	b := New(Options{Self: "toll"})
	b.running = map[string]*started{"agent#1": {spareOf: "agent"}, "base#1": {spareOf: "base"}}
	b.rateCalls = map[string]uint64{"agent": 14400}
	owed := []*plan.Trial{{Variant: "agent#1"}, {Variant: "base#1"}}
	least := b.inPlaceOfRate(owed)
	if want := map[string]uint64{"agent#1": 14400}; !maps.Equal(least, want) {
		t.Fatalf("inPlaceOfRate = %v, want %v", least, want)
	}
	var agent, base atomic.Uint64
	completed := map[string]*atomic.Uint64{"agent#1": &agent, "base#1": &base}
	agent.Store(14399)
	if sentLeast(completed, least) {
		t.Error("sentLeast after 14,399 of 14,400 requests")
	}
	agent.Store(14400)
	if !sentLeast(completed, least) {
		t.Error("not sentLeast after 14,400 of 14,400 requests")
	}
	// A phase whose JVMs have settled ends only once the count is sent.
	h := jitHistory{}
	h.add("agent#1/app", jitPoint{})
	h.add("base#1/app", jitPoint{})
	settled := map[string]bool{"agent#1": true, "base#1": true}
	agent.Store(100)
	if phaseDone(h, owed, settled, nil, completed, least) {
		t.Error("a phase ended with its JVMs settled after 100 of the 14,400 requests it owes")
	}
	agent.Store(14400)
	if !phaseDone(h, owed, settled, nil, completed, least) {
		t.Error("a phase did not end with its JVMs settled and its 14,400 requests sent")
	}
}

// TestAheadAtOnce: beside the rounds, starts are warmed one at a time
// after a warm-up that kept the CPUs busy, all at once after one that
// left them mostly idle.
func TestAheadAtOnce(t *testing.T) {
	for _, tt := range []struct {
		n     int
		known bool
		share float64
		want  int
	}{
		{0, true, 0.9, 0},
		{1, true, 0.9, 1},
		{3, true, 0.9, 1},
		{3, true, 0.5, 1},
		{3, false, 0, 1},
		{3, true, 0.3, 3},
		{2, true, 0.1, 2},
	} {
		if got := aheadAtOnce(tt.n, tt.known, tt.share); got != tt.want {
			t.Errorf("aheadAtOnce(%d, %v, %v) = %d, want %d", tt.n, tt.known, tt.share, got, tt.want)
		}
	}
}

// TestWarmStartsReady: the starts ready are those every variant has
// waiting; one variant without a spare leaves none.
func TestWarmStartsReady(t *testing.T) {
	s := &scenario.Scenario{Variants: []scenario.Variant{{Name: "baseline"}, {Name: "otel"}}}
	for _, tt := range []struct {
		name   string
		spares map[string]int
		want   int
	}{
		{"none", map[string]int{}, 0},
		{"one variant only", map[string]int{"otel": 2}, 0},
		{"each has one", map[string]int{"baseline": 1, "otel": 1}, 1},
		{"the fewest count", map[string]int{"baseline": 3, "otel": 2}, 2},
	} {
		b := &Backend{s: s, spares: map[string][]*started{}}
		for v, n := range tt.spares {
			for range n {
				b.spares[v] = append(b.spares[v], &started{spareOf: v})
			}
		}
		if got := b.WarmStartsReady(); got != tt.want {
			t.Errorf("%s: %d starts ready, want %d", tt.name, got, tt.want)
		}
	}
}

// TestSpareOrder checks that the starts ahead of their turn begin their
// variants in a fresh order at each start, each a permutation of them,
// and that one run's seed and starts give the same order again.
func TestSpareOrder(t *testing.T) {
	owed := []*plan.Trial{{Variant: "baseline"}, {Variant: "extra"}, {Variant: "twin"}}
	b := &Backend{seed: 42, starts: map[string]int{}}
	first := map[string]int{}
	for start := 1; start <= 30; start++ {
		for _, pt := range owed {
			b.starts[pt.Variant] = start
		}
		got := b.spareOrder(owed)
		var names []string
		for _, pt := range got {
			names = append(names, pt.Variant)
		}
		if sorted := slices.Sorted(slices.Values(names)); !slices.Equal(sorted, []string{"baseline", "extra", "twin"}) {
			t.Fatalf("start %d: order %v is not a permutation of the variants", start, names)
		}
		if again := b.spareOrder(owed); again[0] != got[0] || again[1] != got[1] {
			t.Fatalf("start %d: the same seed and starts gave %v, then another order", start, names)
		}
		first[names[0]]++
	}
	for _, v := range []string{"baseline", "extra", "twin"} {
		if first[v] < 3 {
			t.Errorf("%s began first at %d of 30 starts, want a fair share (%v)", v, first[v], first)
		}
	}
}

// TestStartAfterSpareExportsToTheVariantsSink: once a spare has taken its
// turn, its sink counts the variant's telemetry, so a start launched at
// its turn after it must export there too, not to the sink the spare
// retired; otherwise every trial of that start reads no telemetry.
func TestStartAfterSpareExportsToTheVariantsSink(t *testing.T) {
	s, err := scenario.Parse("spare.yaml", []byte(`name: spare
services:
  - name: app
    command: [app, "--port=${port:app}"]
    env: {EXPORT_TO: "${sink}"}
variants:
  - name: baseline
  - name: agent
    exports: true
load:
  target: "http://127.0.0.1:${port:app}"
  requests: [{path: /}]
  rate: 10
  duration: 1s
`))
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{Self: "toll"})
	b.s = s
	resolve := func(addr string) *variant.Variant {
		pool := &portPool{}
		defer pool.release()
		v, err := resolveVariant(s, "agent", pool, "http://"+addr, "toll")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	b.variants["agent"] = resolve("127.0.0.1:1001")
	b.sinks["agent"] = &sinkProcess{addr: "127.0.0.1:1001"}
	spare := &started{v: resolve("127.0.0.1:1002"), spareOf: "agent", sink: &sinkProcess{addr: "127.0.0.1:1002"}}
	b.spares = map[string][]*started{"agent": {spare}}
	if !b.promoteSpare("agent", 0) {
		t.Fatal("the spare did not take its turn")
	}
	want := "EXPORT_TO=http://" + b.sinks["agent"].addr
	if env := b.variants["agent"].Services[0].Env; !slices.Contains(env, want) {
		t.Errorf("a start launched after the spare exports elsewhere than the variant's sink (%s): %q", want, slices.DeleteFunc(slices.Clone(env), func(e string) bool { return !strings.HasPrefix(e, "EXPORT_TO=") }))
	}
}

// TestReadySpareTakesItsTurnAtOnce: a new start whose spare waits warmed
// takes it at once, while further starts still warm beside the rounds;
// waiting for those held jvm3's rounds up for three minutes. Its warm-up,
// long over, is not its first trial's: that trial's telemetry cycle holds
// none of its requests, and none sent at another load.
func TestReadySpareTakesItsTurnAtOnce(t *testing.T) {
	b := New(Options{Self: "toll"})
	spare := &started{v: &variant.Variant{Name: "agent"}, spareOf: "agent", sink: &sinkProcess{addr: "127.0.0.1:1002"},
		warmup: &variantWarmup{completed: 26496, otherLoad: true, telemetry: &sink.Counts{Spans: 65332}}}
	b.spares = map[string][]*started{"agent": {spare}}
	b.ahead = &aheadWarm{cancel: func() {}, done: make(chan struct{}), starts: 2} // still warming
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := b.startLimited(ctx, "agent", 0); err != nil {
		t.Fatalf("start with a spare ready: %v", err)
	}
	if b.running["agent"] != spare {
		t.Errorf("the ready spare did not take its turn")
	}
	tr := &record.Trial{Telemetry: []record.Telemetry{{Spans: 70000}}}
	spare.warmup.addTo(tr, time.Now())
	if tr.Load.WarmupCompleted != 0 || tr.Load.WarmupAtOtherLoad || len(tr.Telemetry) != 1 {
		t.Errorf("the spare's first trial holds its warm-up: %d requests, at another load %v, telemetry %v",
			tr.Load.WarmupCompleted, tr.Load.WarmupAtOtherLoad, tr.Telemetry)
	}
}

// TestSpareStillCompilingSettles: a spare whose warm-up beside the rounds
// ended on a steady cost with its compilers busy (its cost held still
// while they waited for a CPU) is owed a warm-up at its turn, one that
// settles it, and keeps no record of the one it had; a spare whose
// compilers had quietened takes its turn warmed, as does one warmed with
// a start's warm-up, on its CPUs, or one that reached its warm-up's cap;
// a spare warmed beside the rounds without its warm-up's rate phase is
// owed a warm-up at its turn whatever its compilers do, one that works
// their queue off first where they are busy, even at its warm-up's cap.
func TestSpareStillCompilingSettles(t *testing.T) {
	for _, tt := range []struct {
		name          string
		rates         map[string]float64
		beside, ended bool // warmed beside the rounds; ended on a steady cost
		owesRate      bool // warmed beside the rounds without its rate phase
		settle        turnWarm
		// ownLoad is what its last phase sent at the trials' own load,
		// rateCalls what the first warm-up's rate phase sent.
		ownLoad, rateCalls uint64
	}{
		{"queued at idle priority", map[string]float64{"consumer": 5390, "provider": 3}, true, true, false, turnBusy, 0, 0},
		{"at the busy line", map[string]float64{"consumer": busyJIT}, true, true, false, turnBusy, 0, 0},
		{"trickling", map[string]float64{"consumer": 46.8}, true, true, false, turnNone, 0, 0},
		{"settled", map[string]float64{"consumer": 2.1}, true, true, false, turnNone, 0, 0},
		{"warmed with a start's warm-up", map[string]float64{"consumer": 900}, false, true, false, turnNone, 0, 0},
		{"at its warm-up's cap", map[string]float64{"consumer": 900}, true, false, false, turnNone, 0, 0},
		{"settled, owing its rate phase", map[string]float64{"consumer": 2.1}, true, true, true, turnRate, 0, 0},
		{"queued, owing its rate phase", map[string]float64{"consumer": 5390}, true, true, true, turnBusy | turnRate, 0, 0},
		{"at its warm-up's cap, owing its rate phase", map[string]float64{"consumer": 900}, true, false, true, turnBusy | turnRate, 0, 0},
		{"at its warm-up's cap, settled, owing its rate phase", map[string]float64{"consumer": 2.1}, true, false, true, turnRate, 0, 0},
		{"settled, its rate phase taken beside the rounds", map[string]float64{"consumer": 2.1}, true, true, false, turnNone, 0, 0},
		{"settled after the rate phase's calls at the trials' load", map[string]float64{"consumer": 2.1}, true, true, true, turnNone, 9000, 8400},
		{"settled after fewer calls than the rate phase's", map[string]float64{"consumer": 2.1}, true, true, true, turnRate, 4000, 8400},
		{"queued after the rate phase's calls", map[string]float64{"consumer": 900}, true, false, true, turnBusy | turnRate, 9000, 8400},
	} {
		b := New(Options{Self: "toll"})
		spare := &started{v: &variant.Variant{Name: "agent"}, spareOf: "agent", sink: &sinkProcess{addr: "127.0.0.1:1002"}, warmed: true,
			warmup: &variantWarmup{completed: 900, ownLoad: tt.ownLoad, rec: &record.VariantWarmup{Settled: tt.ended, CostSteady: tt.ended, JITMsPerS: tt.rates}}}
		b.s = &scenario.Scenario{}
		// toll's warm-up for a JVM under an open-model load, which has a
		// rate phase; a start beside the rounds may have skipped it.
		b.s.Load = scenario.Load{VariantWarmupAuto: true, VariantWarmupUntil: &scenario.WarmupUntil{JITBelow: scenario.Duration(5 * time.Millisecond)}}
		spare.skippedRate = tt.owesRate
		if tt.beside {
			spare.unwiden = func() error { return nil }
		}
		b.spares = map[string][]*started{"agent": {spare}}
		if tt.rateCalls > 0 {
			b.rateCalls = map[string]uint64{"agent": tt.rateCalls}
		}
		if !b.promoteSpare("agent", 0) {
			t.Fatalf("%s: the spare did not take its turn", tt.name)
		}
		owed := tt.settle != turnNone
		if spare.settle != tt.settle || spare.warmed == owed || (spare.warmup == nil) != owed {
			t.Errorf("%s: settle %v, warmed %v, warm-up kept %v; want settle %v", tt.name, spare.settle, spare.warmed, spare.warmup != nil, tt.settle)
		}
	}
	// A spare that skipped its rate phase but whose warm-up left no
	// record (no rule ended it) takes its turn as it is.
	b := New(Options{Self: "toll"})
	b.s = &scenario.Scenario{}
	spare := &started{v: &variant.Variant{Name: "agent"}, spareOf: "agent", sink: &sinkProcess{addr: "127.0.0.1:1002"}, warmed: true,
		warmup: &variantWarmup{completed: 900}, skippedRate: true, unwiden: func() error { return nil }}
	b.spares = map[string][]*started{"agent": {spare}}
	if !b.promoteSpare("agent", 0) || spare.settle != turnNone {
		t.Errorf("a spare without a warm-up record: settle %v, want none", spare.settle)
	}
}

// TestEnterRoundEndsAHeldWarmup: one variant at a time, a warm-up beside
// the rounds that holds its load ends when a trial of a later round
// begins, not within its own round, and only a round's first trial may
// begin one.
func TestEnterRoundEndsAHeldWarmup(t *testing.T) {
	b := &Backend{}
	aw := &aheadWarm{done: make(chan struct{}), release: make(chan struct{}), round: roundKey{round: 3}}
	b.ahead = aw
	go func() {
		<-aw.release // what holdRound waits for
		b.mu.Lock()
		b.ahead = nil
		b.mu.Unlock()
		close(aw.done)
	}()
	if !b.enterRound(roundKey{round: 3}) {
		t.Error("the first trial of round 3 does not begin a round")
	}
	b.mu.Lock()
	aw.holding = true
	b.mu.Unlock()
	if b.enterRound(roundKey{round: 3}) {
		t.Error("round 3's second trial begins a round")
	}
	select {
	case <-aw.release:
		t.Fatal("a warm-up held within its own round was ended")
	default:
	}
	if !b.enterRound(roundKey{round: 4}) {
		t.Error("round 4's first trial does not begin a round")
	}
	select {
	case <-aw.done:
	default:
		t.Fatal("round 4 began beside the warm-up held until round 3's end")
	}
}

// TestEnterRoundLeavesAWarmupStillWarming: a warm-up that has not yet
// settled goes on across rounds, and once it settles in a later round, it
// holds its load until that round's end.
func TestEnterRoundLeavesAWarmupStillWarming(t *testing.T) {
	b := &Backend{}
	aw := &aheadWarm{done: make(chan struct{}), release: make(chan struct{})}
	b.ahead = aw
	b.enterRound(roundKey{round: 1})
	b.enterRound(roundKey{round: 2})
	b.enterRound(roundKey{round: 3})
	select {
	case <-aw.release:
		t.Fatal("a warm-up still warming was told its round ended")
	default:
	}
	held := make(chan struct{})
	go func() {
		b.holdRound(context.Background(), nil)
		b.mu.Lock()
		b.ahead = nil
		b.mu.Unlock()
		close(aw.done)
		close(held)
	}()
	for deadline := time.Now().Add(5 * time.Second); ; {
		b.mu.Lock()
		holding := aw.holding
		b.mu.Unlock()
		if holding {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("holdRound does not hold")
		}
		time.Sleep(time.Millisecond)
	}
	b.enterRound(roundKey{round: 3})
	select {
	case <-held:
		t.Fatal("a warm-up that settled in round 3 stopped its load within round 3")
	default:
	}
	b.enterRound(roundKey{round: 4})
	<-held
}

func TestBootCPUs(t *testing.T) {
	for _, tt := range []struct{ own, from, want string }{
		{"1", "0-1", "0"},       // two CPUs: the load generator's
		{"1-7", "0-7", "0-6"},   // as many as its own, outside first
		{"2-3", "0-3", "0-1"},   // its own CPUs only when needed
		{"1,3", "0-1,3", "0-1"}, // lists with holes
		{"0-1", "0-1", "0-1"},   // no CPU outside its own
		{"0-3", "0-1", "0-3"},   // too few to start on: its own
		{"1", "", "1"},          // nothing to start on
		{"x", "0-1", "x"},       // unreadable: as it was
	} {
		if got := bootCPUs(tt.own, tt.from); got != tt.want {
			t.Errorf("bootCPUs(%q, %q) = %q, want %q", tt.own, tt.from, got, tt.want)
		}
	}
}

// TestWarmupAheadBeginsWithARound: one variant at a time, spares that
// began to start in a round wait for a later round's first trial (or a
// new start) before their warm-up's load begins.
func TestWarmupAheadBeginsWithARound(t *testing.T) {
	waits := func(aw *aheadWarm) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		return !aw.awaitNextRound(ctx)
	}
	b := &Backend{}
	aw := &aheadWarm{done: make(chan struct{}), release: make(chan struct{}), began: roundKey{round: 3}, next: make(chan struct{})}
	b.ahead = aw
	b.enterRound(roundKey{round: 3})
	if !waits(aw) {
		t.Fatal("the warm-up began within the round its spares began to start in")
	}
	b.enterRound(roundKey{round: 4})
	if waits(aw) {
		t.Fatal("the warm-up still waits once round 4 has begun")
	}
	b.enterRound(roundKey{round: 5})
	if b.warmBegan != (roundKey{round: 4}) {
		t.Errorf("the warm-up's load began with round %+v, want 4", b.warmBegan)
	}
	due := &aheadWarm{release: make(chan struct{}), next: make(chan struct{})}
	due.endRound()
	if waits(due) {
		t.Fatal("the warm-up still waits for a round once a new start is due")
	}
	if waits(&aheadWarm{}) {
		t.Fatal("beside a duet's rounds the warm-up waits for a round")
	}
}

// TestBesideCPUs: starts warmed beside the rounds keep to the warm-up CPUs
// that no service of the rounds runs on, where there is one.
func TestBesideCPUs(t *testing.T) {
	for _, tt := range []struct {
		name      string
		warmup    string
		svc       string
		duet      [2]string
		own       string // a service's own cpus:
		want      string
		wantApart bool
	}{
		{"one at a time, two CPUs", "0-1", "1", [2]string{}, "", "0", true},
		{"together on shared CPUs", "0-1", "1", [2]string{"1", "1"}, "", "0", true},
		{"duet split over every CPU", "0-1", "0-1", [2]string{"0", "1"}, "", "0-1", false},
		{"eight CPUs, a duet on 2-7", "0-7", "2-7", [2]string{"2-4", "5-7"}, "", "0-1", true},
		{"a service on the last free CPU", "0-1", "1", [2]string{}, "0", "0-1", false},
		{"an unreadable list", "0-1", "1", [2]string{}, "x", "0-1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &Backend{warmupCPUs: tt.warmup, svcCPUs: tt.svc, duetCPUs: tt.duet, variants: map[string]*variant.Variant{
				"agent": {Name: "agent", Services: []variant.Service{{Service: scenario.Service{Name: "app", CPUs: tt.own}}}},
			}}
			got, apart := b.besideCPUs()
			if got != tt.want || apart != tt.wantApart {
				t.Errorf("besideCPUs() = %q, %v; want %q, %v", got, apart, tt.want, tt.wantApart)
			}
		})
	}
}

// TestAwaitedSparesSpread: once a new start waits for spares warming beside
// the rounds, no round runs, and their warm-up moves from the CPUs beside
// the rounds to every warm-up CPU.
func TestAwaitedSparesSpread(t *testing.T) {
	online, err := pin.Online()
	if err != nil || len(online) < 2 {
		t.Skipf("needs two CPUs (%v, %v)", online, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := launch.StartGroup(ctx, ctx, []launch.Spec{{Name: "svc", Argv: []string{"sleep", "30"}, LogPath: t.TempDir() + "/svc.log"}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop(time.Second)
	pid := g.Services()[0].Pid()
	beside := online[:1]
	if err := beside.Process(pid); err != nil {
		t.Fatal(err)
	}
	st := &started{v: &variant.Variant{Name: "app"}, group: g, runs: []record.ServiceRun{{Name: "svc", CPUs: online[1:2].String()}},
		cgs: map[string]*cgroup.Group{}, idleOn: beside.String()}
	b := &Backend{warmupCPUs: online.String(), running: map[string]*started{spareKey("app", 1): st}}
	aw := &aheadWarm{done: make(chan struct{}), release: make(chan struct{}), spares: []string{spareKey("app", 1)}}
	close(aw.done) // warmed as soon as awaited
	b.ahead = aw
	if err := b.awaitAhead(ctx); err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		t.Fatal(err)
	}
	if set.Count() != len(online) {
		t.Errorf("the awaited spare runs on %d CPUs, want every warm-up CPU (%s)", set.Count(), online)
	}
}
