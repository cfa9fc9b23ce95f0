package warmup

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/pin"
)

// TestVariantWarmupUntilJITSettles runs real JVMs as a shared duet with
// restart: per-round and load.variant_warmup_until, and checks that each
// warm-up ended once the JVMs' JIT compilation settled, well before its
// maximum, both sides of a duet together, and that the trials, the
// summary and the report say so.
func TestVariantWarmupUntilJITSettles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	const maxS = 50
	path := tolltest.HelloScenario(t, `name: jitwarmup
mode: duet
pinning: {duet: shared}
restart: per-round
`, fmt.Sprintf(`load:
  target: "http://127.0.0.1:${port:hello}"
  requests: [{path: /}]
  rate: 150
  warmup: 500ms
  duration: 2s
  variant_warmup: %ds
  variant_warmup_until: {jit_below: 10ms, over: 3s}
rounds: 2
`, maxS))
	others := tolltest.OthersCPU()
	out, stdout, trials := tolltest.RunForTrials(t, path, 4) // 2 rounds × 2 variants
	othersCPUs := others()
	t.Logf("other processes used %.2f CPUs on average during the run", othersCPUs)

	type trial struct {
		Index          int     `json:"index"`
		Round          int     `json:"round"`
		Variant        string  `json:"variant"`
		VariantWarmupS float64 `json:"variant_warmup_s"`
		VariantWarmup  *struct {
			MaxS      float64            `json:"max_s"`
			Settled   bool               `json:"settled"`
			JITMsPerS map[string]float64 `json:"jit_ms_per_s"`
		} `json:"variant_warmup"`
		Load struct {
			WarmupAtOtherLoad bool `json:"warmup_at_other_load"`
		} `json:"load"`
	}
	lasted := map[int][]float64{} // round → each side's warm-up
	for _, b := range trials {
		var tr trial
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		// A machine busy enough starves the JVMs' compiler threads, and
		// their compilation outlasts any maximum a test can wait: other
		// work that took a quarter of a CPU over the run, or a load above
		// 1 per CPU at its end.
		if w := tr.VariantWarmup; w != nil && !w.Settled && (othersCPUs > 0.25 || tolltest.LoadPerCPU() > 1) {
			t.Skipf("trial %d (%s): the JIT did not settle within %d s while other processes used %.2f CPUs on average and the load is %.1f per CPU: too busy to check", tr.Index, tr.Variant, maxS, othersCPUs, tolltest.LoadPerCPU())
		}
	}
	for _, b := range trials {
		var tr trial
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		w := tr.VariantWarmup
		if w == nil {
			t.Errorf("trial %d (%s, round %d) records no variant warm-up; with restart: per-round every trial begins one", tr.Index, tr.Variant, tr.Round)
			continue
		}
		t.Logf("%s round %d: warm-up %.1f s, settled %v, JIT %v ms/s", tr.Variant, tr.Round, tr.VariantWarmupS, w.Settled, w.JITMsPerS)
		if !w.Settled || w.MaxS != maxS || tr.VariantWarmupS >= maxS-1 || tr.VariantWarmupS < 3 {
			t.Errorf("trial %d (%s, round %d): warm-up %.1f s of at most %g, settled %v; want it settled after at least the 3 s window and before its maximum of %d s",
				tr.Index, tr.Variant, tr.Round, tr.VariantWarmupS, w.MaxS, w.Settled, maxS)
		}
		// A duet's side that settled stays settled while it compiles
		// less than twice the rule's 10 ms/s, waiting for its partner:
		// at the warm-up's end its rate is below 20 ms/s, not 10.
		if ms, ok := w.JITMsPerS["hello"]; !ok || ms >= 20 {
			t.Errorf("trial %d (%s): JIT at the warm-up's end %v, want hello's below 20 ms/s (twice the rule's 10, a settled side's bound)", tr.Index, tr.Variant, w.JITMsPerS)
		}
		if tr.Load.WarmupAtOtherLoad {
			t.Errorf("trial %d (%s): warmed at its own load, but records another", tr.Index, tr.Variant)
		}
		lasted[tr.Round] = append(lasted[tr.Round], tr.VariantWarmupS)
	}
	for r, ws := range lasted {
		if len(ws) == 2 && (ws[0]-ws[1] > 0.5 || ws[1]-ws[0] > 0.5) {
			t.Errorf("round %d: the duet's sides warmed for %v s; a duet warms both together", r, ws)
		}
	}

	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var warmups struct {
		Warmups []struct {
			Variant        string `json:"variant"`
			Count, Settled int
		} `json:"warmups"`
		Warnings []struct {
			Text string `json:"text"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal(b, &warmups); err != nil {
		t.Fatal(err)
	}
	if len(warmups.Warmups) != 2 {
		t.Errorf("summary warmups %+v, want both variants", warmups.Warmups)
	}
	for _, w := range warmups.Warmups {
		if w.Count != 2 || w.Settled != 2 {
			t.Errorf("summary: %s had %d warm-ups, %d settled; want 2 of 2", w.Variant, w.Count, w.Settled)
		}
	}
	for _, w := range warmups.Warnings {
		if strings.Contains(w.Text, "variant warm-up") {
			t.Errorf("warning of a settled warm-up: %s", w.Text)
		}
	}
	if !strings.Contains(stdout, "variant warm-ups until the JIT settles (below 10 ms/s over 3 s, at most 50s)") {
		t.Errorf("report lacks the warm-ups line:\n%s", stdout)
	}
}

// TestVariantWarmupUntilWithoutJVM runs services that are not JVMs with
// load.variant_warmup_until, one variant at a time (the sequential
// schedule) and restarting every round, at load.variant_warmup_rate: with
// no compilation to wait for, each warm-up lasts its maximum at that rate,
// the trials record that there was no JVM, the run says so once per
// variant, and nothing is warned of. The spans
// the warm-up's requests caused count with those requests in the trial's
// telemetry cycle: spans per request stay the 4 each request makes, where
// 3 s of warm-up beside a 1.2 s trial would otherwise triple them.
func TestVariantWarmupUntilWithoutJVM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	path := tolltest.WriteScenario(t, "nojvm", `  - name: baseline
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel]}`, `  rate: 50
  warmup: 200ms
  duration: 1s
  variant_warmup: 3s
  variant_warmup_until: {jit_below: 5ms, over: 2s}
  variant_warmup_rate: 200
rounds: 2
restart: per-round`)
	out, stdout, trials := tolltest.RunForTrials(t, path, 4)
	for f, b := range trials {
		tr := readWarmedTrial(t, b)
		if w := tr.VariantWarmup; w == nil || !w.NoJVM || w.Settled || tr.VariantWarmupS < 2.9 || tr.VariantWarmupS > 3.5 {
			t.Errorf("%s: %s warm-up %.2f s, %+v; want its full 3 s, no JVM, not settled", f, tr.Variant, tr.VariantWarmupS, w)
		}
		// 3 s at load.variant_warmup_rate (200/s), then 200 ms at the
		// trial's 50/s: 610, where the trial's rate would send 160.
		if n := tr.Load.WarmupCompleted; n < 500 || n > 620 {
			t.Errorf("%s: %d warm-up requests completed, want about 610 (3 s at 200/s and 200 ms at 50/s)", f, n)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"baseline", "otel"} {
		if n := strings.Count(string(b), v+`: no measured service is a JVM`); n != 1 {
			t.Errorf("manifest says %d times that %s has no JVM, want once", n, v)
		}
	}
	sum := tolltest.ReadSummary(t, out)
	// Spans counted with the warm-up's requests as well as with the
	// trial's would read several times 4; a busy machine delays the
	// exporter's last batches past the trial's end, and reads fewer.
	switch spr := sum.Value(t, "otel", "spans_per_request"); {
	case spr > 4.5:
		t.Errorf("otel: %.2f spans per request, want the 4 each request makes (±0.5): the warm-up's spans are counted against the trial's requests", spr)
	case spr < 3.5 && tolltest.LoadPerCPU() > 1:
		t.Logf("otel: %.2f spans per request, fewer than the 4 each request makes, on a machine with a load of %.1f per CPU", spr, tolltest.LoadPerCPU())
	case spr < 3.5:
		t.Errorf("otel: %.2f spans per request, want the 4 each request makes (±0.5)", spr)
	}
	if strings.Contains(stdout, "without its JIT settling") {
		t.Errorf("a warning of an unsettled JIT with no JVM:\n%s", stdout)
	}
	if !strings.Contains(stdout, "variant warm-up at 200 req/s, then at each trial's load, each until the JIT settles, at most 3s each") {
		t.Errorf("report's first line lacks the warm-up's rate:\n%s", stdout)
	}
	if !strings.Contains(stdout, "baseline 3 s, no JVM; otel 3 s, no JVM") {
		t.Errorf("report lacks the warm-ups line:\n%s", stdout)
	}
}

// TestVariantWarmupUsers warms each variant's fresh services with two
// closed-model users (load.variant_warmup_users): as fast as they answer,
// many times the requests the trial's 5 req/s would send in the same 2 s,
// and the report's first line says how the warm-up was sent. Each trial
// records the connections its own load opened, and that its warm-up was
// sent at another load than its own.
func TestVariantWarmupUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	path := tolltest.WriteScenario(t, "users", `  - name: baseline
  - name: twin`, `  rate: 5
  warmup: 200ms
  duration: 1s
  variant_warmup: 2s
  variant_warmup_users: 2
rounds: 1
restart: per-round`)
	_, stdout, trials := tolltest.RunForTrials(t, path, 2)
	for f, b := range trials {
		tr := readWarmedTrial(t, b)
		// The trial's own 1.2 s at 5 req/s: a connection or a few, not
		// the warm-up's.
		if c := tr.Load.Connections; c < 1 || c > 10 {
			t.Errorf("%s: the trial opened %d connections, want 1 to 10", f, c)
		}
		// 2 s at 5 req/s and 200 ms more would be 11. Two users
		// against a service answering in about a millisecond send
		// thousands on a quiet machine, and more than a hundred on one
		// with a load of 14 per CPU.
		if n := tr.Load.WarmupCompleted; n < 44 || tr.VariantWarmupS < 1.9 {
			t.Errorf("%s: %d warm-up requests in a %.1f s variant warm-up, want 2 s and at least four times the 11 the trial's rate would send", f, n, tr.VariantWarmupS)
		}
		if !tr.Load.WarmupAtOtherLoad {
			t.Errorf("%s: the trial does not record that its warm-up's users were another load than its own", f)
		}
	}
	if !strings.Contains(stdout, "variant warm-up 2s by 2 users") {
		t.Errorf("report's first line lacks the warm-up's users:\n%s", stdout)
	}
}

// TestVariantWarmupInPhases warms a real JVM by two users until its JIT
// settles, then at an open-model rate until it settles again, then at the
// trial's own rate until it settles once more (load.variant_warmup_users and
// _rate with _until): each trial records the three phases' lengths, each
// at least the rule's window, and the requests each sent, and the report's
// first line says how the warm-up went.
func TestVariantWarmupInPhases(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	classes := tolltest.HelloClasses(t)
	const maxS, warmRate, rate = 40, 300, 100
	s := fmt.Sprintf(`name: phases
services:
  - name: hello
    command: [java, -Xmx64m, -cp, %s, Hello, "${port:hello}"]
    ready: {http: "http://127.0.0.1:${port:hello}/", timeout: 20s}
    measure: true
variants:
  - name: baseline
load:
  target: "http://127.0.0.1:${port:hello}"
  requests: [{path: /}]
  rate: %d
  warmup: 200ms
  duration: 1s
  variant_warmup: %ds
  variant_warmup_until: {jit_below: 10ms, over: 3s}
  variant_warmup_users: 20
  variant_warmup_rate: %d
rounds: 1
`, classes, rate, maxS, warmRate)
	path := filepath.Join(t.TempDir(), "phases.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stdout, trials := tolltest.RunForTrials(t, path, 1)
	for f, b := range trials {
		tr := readWarmedTrial(t, b)
		w := tr.VariantWarmup
		if w == nil {
			t.Fatalf("%s: no variant warm-up recorded", f)
		}
		t.Logf("warm-up %.1f s in phases of %v s, settled %v, %d requests", tr.VariantWarmupS, w.PhasesS, w.Settled, tr.Load.WarmupCompleted)
		if len(w.PhasesS) != 3 {
			t.Fatalf("%s: phases %v, want three (users, %d req/s, the trial's %d req/s)", f, w.PhasesS, warmRate, rate)
		}
		// Each phase settles after at least its 3 s window, before its
		// maximum, and they follow one another.
		sum := 0.0
		for i, p := range w.PhasesS {
			if p < 3 || p > maxS-1 {
				t.Errorf("%s: phase %d lasted %.1f s, want at least the 3 s window and less than its %d s maximum", f, i+1, p, maxS)
			}
			sum += p
		}
		if !w.Settled || tr.VariantWarmupS < sum-0.1 || tr.VariantWarmupS > sum+2 {
			t.Errorf("%s: warm-up %.1f s, its phases %v, settled %v; want every phase settled, one after the other", f, tr.VariantWarmupS, w.PhasesS, w.Settled)
		}
		// The rate phases send their rate × their length; the users
		// before them send more on top. The JDK's HttpServer holds each
		// keep-alive response for a delayed ACK, about 25 requests a
		// second a connection here: the rate phase, which keeps the
		// users' 20 requests in flight at most, has room for its 300 a
		// second (12 in flight), and the users send at least 5 a second.
		atRates := float64(warmRate)*w.PhasesS[1] + float64(rate)*w.PhasesS[2]
		if n := float64(tr.Load.WarmupCompleted); n < 0.9*atRates+5*w.PhasesS[0] {
			t.Errorf("%s: %.0f warm-up requests, want the rate phases' %.0f and the users' on top", f, n, atRates)
		}
	}
	if !strings.Contains(stdout, fmt.Sprintf("variant warm-up by 20 users, then at %d req/s, then at each trial's load, each until the JIT settles, at most %ds each", warmRate, maxS)) {
		t.Errorf("report's first line lacks the phases:\n%s", stdout)
	}
}

// warmedTrial is what the warm-up tests read of a trial file.
type warmedTrial struct {
	Variant        string  `json:"variant"`
	VariantWarmupS float64 `json:"variant_warmup_s"`
	VariantWarmup  *struct {
		Settled bool      `json:"settled"`
		NoJVM   bool      `json:"no_jvm"`
		PhasesS []float64 `json:"phases_s"`
	} `json:"variant_warmup"`
	Load struct {
		WarmupCompleted   uint64 `json:"warmup_completed"`
		Connections       uint64 `json:"connections"`
		WarmupAtOtherLoad bool   `json:"warmup_at_other_load"`
	} `json:"load"`
}

// readWarmedTrial decodes trial file contents b.
func readWarmedTrial(t *testing.T, b []byte) warmedTrial {
	t.Helper()
	var tr warmedTrial
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestWarmupOnAllCPUs checks pinning.warmup: all end to end: a service on
// CPU 1 runs on every CPU at idle priority, its cgroup idle, during its
// variant warm-up, and on CPU 1 at normal priority again before its
// trial's load begins. The service logs its process's allowed CPUs,
// scheduling policy and cgroup's cpu.idle every 20 ms with the time.
func TestWarmupOnAllCPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	online, err := pin.Online()
	if err != nil || len(online) < 2 {
		t.Skipf("needs 2 CPUs, one for toll and one for the services: %v (%v)", online, err)
	}
	// As the log reads them: CPUs/policy/idle, 0 SCHED_OTHER, 5
	// SCHED_IDLE; idle is the cgroup's cpu.idle, "-" on a kernel without
	// idle groups.
	notIdle, idle := "0", "1"
	if !idleGroups(t) {
		notIdle, idle = "-", "-"
	}
	own, all := online[1:].String()+"/0/"+notIdle, online.String()+"/5/"+idle
	dir := t.TempDir()
	path := filepath.Join(dir, "widen.yaml")
	// A bounded loop: at most 400 readings, 8 s. The service execs into
	// the provider half a second after the readings begin, so that some
	// are taken while it starts, however slowly a busy machine runs them.
	const logCPUs = `idle() { p=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/$1/cgroup); f=/sys/fs/cgroup/cpu$p/cpu.idle; [ -n "$p" ] || f=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/$1/cgroup)/cpu.idle; cat $f 2>/dev/null || echo -; }; ` +
		`(sleep 0.5; exec ${toll} app provider --addr 127.0.0.1:${port:app} --work 2000) & for i in $(seq 1 400); do echo "cpus $(date +%s.%N) $(grep Cpus_allowed_list /proc/$!/status | cut -f2)/$(awk '/^policy/ {print $3}' /proc/$!/sched)/$(idle $!)"; sleep 0.02; done; wait`
	scenario := fmt.Sprintf(`name: widen
services:
  - name: app
    command: [sh, -c, %q]
    ready: {http: "http://127.0.0.1:${port:app}/health", timeout: 10s}
    measure: true
variants:
  - name: baseline
load:
  target: "http://127.0.0.1:${port:app}"
  requests:
    - {path: /provider}
  rate: 50
  warmup: 200ms
  duration: 1s
  variant_warmup: 1500ms
  variant_warmup_users: 2
rounds: 1
pinning: {warmup: all}
`, logCPUs)
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stdout, trials := tolltest.RunForTrials(t, path, 1)
	var tr struct {
		MeasureStart time.Time `json:"measure_start"`
		Start        time.Time `json:"start"`
	}
	if err := json.Unmarshal(trials["0001-baseline.json"], &tr); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(out, "logs", "baseline.app.1.log"))
	if err != nil {
		t.Fatal(err)
	}
	// Readings in order: own CPUs while starting, all of them at idle
	// priority in an idle group in the warm-up, own again before the
	// trial's load and to the end.
	// A reading is three reads, the CPUs, the policy and the cgroup's
	// idle, so one that falls on a change reads some before it and some
	// after: such a mix is left out, and one that lasted would leave the
	// sequence short of the warm-up's reading or of the final own one.
	var seq []string
	var lastWide time.Time
	for line := range strings.Lines(string(log)) {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "cpus" || f[2] != own && f[2] != all {
			continue
		}
		sec, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if f[2] == all {
			lastWide = time.Unix(0, int64(sec*1e9))
		}
		if len(seq) == 0 || seq[len(seq)-1] != f[2] {
			seq = append(seq, f[2])
		}
	}
	if want := []string{own, all, own}; !slices.Equal(seq, want) {
		t.Fatalf("the service's allowed CPUs/policy went %v, want %v (own, all in the warm-up, own)\n%s", seq, want, log)
	}
	if !lastWide.Before(tr.MeasureStart.Add(-200 * time.Millisecond)) {
		t.Errorf("the service still ran on CPUs %s at %v, past its trial's load start (measure_start %v less its 200 ms warm-up)", all, lastWide, tr.MeasureStart)
	}
	if !strings.Contains(stdout, "by 2 users on CPUs "+online.String()) {
		t.Errorf("report's first line lacks the warm-up's CPUs:\n%s", stdout)
	}
}

// TestWarmupsRunAtOnce starts three variants once and checks that their
// variant warm-ups ran at once, at the first loaded trial after the start,
// one after another neither in a sequential run nor in a duet's: each
// variant's first trial records a warm-up of the full length that began
// when the others' did. Nothing is measured during a warm-up.
func TestWarmupsRunAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real services")
	}
	for _, tt := range []struct{ name, schedule string }{
		{"sequential", "mode: sequential"},
		{"duet", "mode: duet\npinning: {duet: shared}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := tolltest.WriteScenario(t, "atonce", tolltest.HeavyVariants+`
  - name: twin`, `  rate: 50
  warmup: 200ms
  duration: 1s
  variant_warmup: 2s
rounds: 1
restart: once
`+tt.schedule)
			want := 3
			if tt.name == "duet" {
				want = 4 // two duets, the baseline in each
			}
			_, _, trials := tolltest.RunForTrials(t, path, want)
			began := map[string]time.Time{}
			for f, b := range trials {
				var tr struct {
					Variant        string    `json:"variant"`
					Start          time.Time `json:"start"`
					VariantWarmupS float64   `json:"variant_warmup_s"`
				}
				if err := json.Unmarshal(b, &tr); err != nil {
					t.Fatal(err)
				}
				if tr.VariantWarmupS == 0 {
					continue // a later trial of the baseline in a duet
				}
				if tr.VariantWarmupS < 1.9 || tr.VariantWarmupS > 2.6 {
					t.Errorf("%s: %s warmed %.2f s, want the 2 s asked", f, tr.Variant, tr.VariantWarmupS)
				}
				began[tr.Variant] = tr.Start
			}
			if len(began) != 3 {
				t.Fatalf("warm-ups of %v, want one for each of the 3 variants", slices.Sorted(maps.Keys(began)))
			}
			first, last := began["baseline"], began["baseline"]
			for _, at := range began {
				first, last = minTime(first, at), maxTime(last, at)
			}
			if d := last.Sub(first); d > 500*time.Millisecond {
				t.Errorf("the warm-ups began %v apart (%v), want at once", d, began)
			}
		})
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// runStartsAhead runs two variants of the hello JVM in precision mode with
// at least three starts, head and args as given, and returns the results
// directory and what toll printed.
func runStartsAhead(t *testing.T, head string, args ...string) (out, stdout, stderr string) {
	t.Helper()
	path := tolltest.HelloScenario(t, head, `load:
  target: "http://127.0.0.1:${port:hello}"
  requests: [{path: /}]
  rate: 150
  warmup: 500ms
  duration: 1s
  variant_warmup: 20s
  variant_warmup_until: {jit_below: 10ms, over: 3s}
precision: {target: 50%, budget: 3m, min_rounds: 2, min_starts: 3}
`)
	out = filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, append(append([]string{"run", path}, args...), "--out", out)...)
	// The baseline's JVMs log the collector they chose (the other
	// variant's JOPTS names its own).
	cmd.Env = append(cmd.Env, "JOPTS=-Xlog:gc")
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	tolltest.SkipIfInvalid(t, cmd.Run(), so.String(), se.String())
	return out, so.String(), se.String()
}

// TestSparesWarmedAtOnce runs real JVMs in precision mode, one variant at
// a time (--sequential), started once per start, with at least three
// starts, their warm-ups on their own CPUs (no pinning.warmup: none runs
// beside the rounds). The first start's warm-up warms
// it alone and measures what its services ask of the CPUs: little, at 150
// requests a second. The second start's warm-up then also starts and warms
// the third start of every variant, at once, so that the third start
// needs no warm-up of its own. Its trials take over the warm-up that ran
// ahead of them (not one of their own), the report says so, and the
// spares' processes stop with the run.
func TestSparesWarmedAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	out, stdout, stderr := runStartsAhead(t, "name: spares\nrestart: once\n", "--sequential")
	if n := strings.Count(stdout+stderr, "variant warm-up of baseline:"); n != 2 {
		t.Errorf("baseline warmed %d times, want twice for three starts:\n%s", n, stdout)
	}
	if !strings.Contains(stdout+stderr, "and 1 more start of each variant ahead of its turn, warmed at once") {
		t.Errorf("no line says a start was warmed ahead of its turn:\n%s", stdout)
	}
	if strings.Contains(stdout+stderr, "outlived the services") {
		t.Errorf("processes outlived the run:\n%s\n%s", stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Starts int `json:"starts"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Starts != 3 {
		t.Fatalf("%d starts, want 3:\n%s", m.Starts, stdout)
	}
	warmed := map[int]map[string]float64{} // start → variant → warm-up
	for _, tr := range tolltest.ReadTrials(t, out) {
		if tr.VariantWarmupS == 0 {
			continue
		}
		if warmed[tr.Launch] == nil {
			warmed[tr.Launch] = map[string]float64{}
		}
		warmed[tr.Launch][tr.Variant] = tr.VariantWarmupS
		// The third start's services began their trial, fresh.
		if tr.Launch == 2 && !tr.Services[0].Started {
			t.Errorf("trial %d (%s, start 3) does not record its services as started for it", tr.Index, tr.Variant)
		}
	}
	for l := 0; l < 3; l++ {
		if len(warmed[l]) != 2 {
			t.Errorf("start %d: warm-ups %v, want both variants' taken over by a trial", l+1, warmed[l])
		}
	}
	for v, s := range warmed[2] {
		if d := s - warmed[1][v]; d > 0.5 || d < -0.5 {
			t.Errorf("%s: start 3 warmed %.1f s and start 2 %.1f s, want the one warm-up of both", v, s, warmed[1][v])
		}
	}
}

// TestStartsWarmedBesideTheRounds runs real JVMs in precision mode, started
// once per start, with at least three starts, their warm-ups on every CPU
// at idle priority (pinning.warmup: all), in a duet, together and one
// variant at a time. Only the first start warms before its rounds; the next two starts
// of every variant start and warm beside those rounds, at idle priority,
// and take their turns warm: no later start warms before its rounds. Their
// trials take over the warm-up that ran beside the rounds, the report says
// so, the spares' processes stop with the run, and every start's JVM
// chose the collector the first did (it began on as many CPUs).
func TestStartsWarmedBesideTheRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	for _, tt := range []struct {
		name, head string
		args       []string
	}{
		{"duet", "name: ahead\nmode: duet\npinning: {duet: shared, warmup: all}\nrestart: once\n", nil},
		{"together", "name: aheadtog\nmode: together\npinning: {warmup: all}\nrestart: once\n", nil},
		{"one at a time", "name: aheadseq\npinning: {warmup: all}\nrestart: once\n", []string{"--sequential"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, stdout, stderr := runStartsAhead(t, tt.head, tt.args...)
			checkStartsWarmedBeside(t, out, stdout, stderr)
		})
	}
}

// checkStartsWarmedBeside checks a run of runStartsAhead whose later
// starts warmed beside its rounds.
func checkStartsWarmedBeside(t *testing.T, out, stdout, stderr string) {
	t.Helper()
	if n := strings.Count(stdout+stderr, "variant warm-up of baseline:"); n != 1 {
		t.Errorf("baseline warmed %d times before its rounds, want once for three starts:\n%s", n, stdout)
	}
	beside := strings.Index(stdout+stderr, "2 more starts of each variant warmed beside the rounds")
	if beside < 0 {
		t.Errorf("no line says two starts were warmed beside the rounds:\n%s", stdout)
	} else if first := strings.Index(stdout+stderr, "round 1"); first < 0 || first > beside {
		t.Errorf("the starts ahead were warmed before the rounds began:\n%s", stdout)
	}
	if strings.Contains(stdout+stderr, "outlived the services") {
		t.Errorf("processes outlived the run:\n%s\n%s", stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Starts int      `json:"starts"`
		Notes  []string `json:"notes"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Starts != 3 {
		t.Fatalf("%d starts, want 3:\n%s", m.Starts, stdout)
	}
	if !slices.ContainsFunc(m.Notes, func(n string) bool {
		return strings.Contains(n, "beside the rounds, at idle priority") && strings.Contains(n, "load generator of their own")
	}) {
		t.Errorf("the manifest's notes do not say how the starts ahead were warmed: %q", m.Notes)
	}
	online, err := pin.Online()
	if err != nil {
		t.Fatal(err)
	}
	idle := idleGroups(t)
	warmed := map[int]map[string]float64{} // start → variant → warm-up
	ahead, warming := 0, 0
	for _, tr := range tolltest.ReadTrials(t, out) {
		// A start warming ahead of its turn ran on every CPU in an idle
		// group, which yields to the trial's services and to toll; on a
		// kernel without idle groups it kept off the CPUs of the trial's
		// services: here there is one, the load generator's.
		for _, n := range tr.Neighbours {
			if n.IdleCPUs == "" {
				continue
			}
			ahead++
			if !strings.HasSuffix(n.Variant, " ahead)") {
				warming++ // not yet shelved for its turn
			}
			if idle {
				if n.IdleCPUs != online.String() {
					t.Errorf("trial %d: %s warmed in an idle group on CPUs %s, want every CPU, %s", tr.Index, n.Variant, n.IdleCPUs, online)
				}
				continue
			}
			for _, svc := range tr.Services {
				if shared := sharedCPUs(t, n.IdleCPUs, svc.CPUs); shared != "" {
					t.Errorf("trial %d: %s waited on CPUs %s, %s of them %s's", tr.Index, n.Variant, n.IdleCPUs, shared, svc.Name)
				}
			}
		}
		if tr.VariantWarmupS == 0 {
			continue
		}
		if warmed[tr.Launch] == nil {
			warmed[tr.Launch] = map[string]float64{}
		}
		warmed[tr.Launch][tr.Variant] = tr.VariantWarmupS
		// Beside the rounds a warm-up may last what is left of the
		// budget, not the 20 s of load.variant_warmup that bounds one
		// before them.
		if w := tr.VariantWarmup; tr.Launch > 0 && (w == nil || w.MaxS <= 20) {
			t.Errorf("start %d of %s warmed beside the rounds for at most %+v, want more than load.variant_warmup's 20 s", tr.Launch+1, tr.Variant, w)
		}
	}
	if ahead == 0 {
		t.Error("no trial counted a start ahead of its turn among its neighbours")
	}
	if warming == 0 {
		t.Error("no trial counted a start warming beside it among its neighbours")
	}
	for l := 0; l < 3; l++ {
		if len(warmed[l]) != 2 {
			t.Errorf("start %d: warm-ups %v, want both variants' taken over by a trial", l+1, warmed[l])
		}
	}
	checkSameCollector(t, out)
}

// sharedCPUs returns the CPUs that lists a and b both hold.
func sharedCPUs(t *testing.T, a, b string) string {
	t.Helper()
	if a == "" || b == "" {
		return ""
	}
	as, err := pin.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := pin.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var both pin.CPUs
	for _, c := range as {
		if slices.Contains(bs, c) {
			both = append(both, c)
		}
	}
	return both.String()
}

// checkSameCollector checks that every start of the baseline's JVM in
// run out chose the same garbage collector: a JVM sizes itself by the
// CPUs it sees when it begins (the serial collector on one, G1 on two), so
// a start begun on other CPUs than its predecessor is another program.
func checkSameCollector(t *testing.T, out string) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(out, "logs", "baseline.hello.*.log"))
	if err != nil || len(logs) < 2 {
		t.Fatalf("the baseline's service logs: %v, %v", logs, err)
	}
	using := regexp.MustCompile(`\[gc\] *Using (\S+)`)
	chose := map[string][]string{}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		m := using.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s names no collector:\n%s", l, b)
		}
		chose[string(m[1])] = append(chose[string(m[1])], filepath.Base(l))
	}
	if len(chose) != 1 {
		t.Errorf("the baseline's starts chose different collectors: %v", chose)
	}
	// toll's own record of each start's collector agrees with the JVM's
	// log, and the run, whose JVMs all ran one, warns of none.
	recorded := 0
	for _, tr := range tolltest.ReadTrials(t, out) {
		if tr.Variant != "baseline" {
			continue
		}
		for _, ss := range tr.Samples {
			for _, p := range ss.Points {
				r := p.Runtime("jvm")
				if r == nil || r.Setup["gc"] == "" {
					continue
				}
				recorded++
				if len(chose[r.Setup["gc"]]) == 0 {
					t.Errorf("trial %d recorded collector %q, the logs %v", tr.Index, r.Setup["gc"], chose)
				}
			}
		}
	}
	if recorded == 0 {
		t.Error("no reading of the baseline's JVM recorded its collector")
	}
	if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil {
		t.Fatal(err)
	} else if strings.Contains(string(b), `"setups-differ"`) {
		t.Errorf("the summary warns that the collectors differed, one collector in the logs: %v", chose)
	}
}

// idleGroups says whether this kernel has idle cgroups (cpu.idle, Linux
// 5.15), which toll's warm-ups at idle priority run in.
func idleGroups(t *testing.T) bool {
	t.Helper()
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor); err != nil {
		t.Fatal(err)
	}
	return major > 5 || major == 5 && minor >= 15
}
