package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/record"
)

// TestArrivalsAsAsked runs toll load at 2,000 req/s against toll app
// provider with about 250 µs of CPU per request (issue #18, part 2). By
// default each request leaves at its own time: the median latency reads
// what --quantum 0 reads, the send lateness is reported, and nothing says
// grid. An explicit 2 ms grid sends bursts of 4, which the provider, on one
// CPU, serves one after another: the grid's median carries that queueing
// (its signature), the default's does not, and the grid run says it was
// measured with one.
func TestArrivalsAsAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a service under load")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("needs taskset to put the provider and the load generator on CPUs of their own")
	}
	// The provider on CPU 1 (GOMAXPROCS 1: one request at a time), the
	// load generator on CPU 0, as toll run places them.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	prov := tolltest.Command(t, "app", "provider", "--addr", addr, "--work", "6000")
	prov.Args = append([]string{taskset, "-c", "1"}, prov.Args...)
	prov.Path = taskset
	var provErr bytes.Buffer
	prov.Stderr = &provErr
	if err := prov.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		prov.Process.Kill()
		prov.Wait()
	})
	url := "http://" + addr + "/provider"
	deadline := time.Now().Add(10 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/health"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("provider not ready: %s", provErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	run := func(args ...string) (loadSummary, string) {
		t.Helper()
		cmd := tolltest.Command(t, append([]string{"load", url, "--rate", "2000", "-d", "2s", "--warmup", "500ms"}, args...)...)
		cmd.Args = append([]string{taskset, "-c", "0"}, cmd.Args...)
		cmd.Path = taskset
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("toll load %q: %v\n%s", args, err, stderr.String())
		}
		var s loadSummary
		if strings.Contains(strings.Join(args, " "), "--json") {
			if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
				t.Fatalf("%v: %s", err, stdout.String())
			}
		}
		return s, stdout.String()
	}
	// Alternate, up to five times each, in an order that turns with the
	// round so that no setting always follows another, and keep each
	// setting's lower median: a noisy machine only ever adds to latency.
	// Each setting's highest median says how much the machine moved one
	// setting's latency between repeats.
	p50 := map[string]float64{}
	p50Max := map[string]float64{}
	lateP50 := map[string]float64{} // the generator's own lateness, µs
	last := map[string]loadSummary{}
	settings := []string{"default", "0", "2ms"}
	var problems []string
	for round := range 5 {
		for i := range settings {
			q := settings[(i+round)%len(settings)]
			args := []string{"--json"}
			if q != "default" {
				args = append(args, "--quantum", q)
			}
			s, _ := run(args...)
			if s.Errors != 0 {
				t.Fatalf("quantum %s: %+v", q, s)
			}
			// 2,000 req/s of 250 µs is half of CPU 1: a machine busy
			// enough to hold the provider or the generator below the
			// rate cannot show a latency property.
			if s.Missed > 40 || s.Completed < 3900 {
				t.Skipf("the machine is too busy for 2,000 req/s of 250 µs (quantum %s: %d of %d missed, p50 %.1f ms)", q, s.Missed, s.Scheduled, s.LatencyMS["p50"])
			}
			if v, ok := p50[q]; !ok || s.LatencyMS["p50"] < v {
				p50[q] = s.LatencyMS["p50"]
			}
			p50Max[q] = max(p50Max[q], s.LatencyMS["p50"])
			if v, ok := lateP50[q]; !ok || s.LatenessUS["p50"] < v {
				lateP50[q] = s.LatenessUS["p50"]
			}
			last[q] = s
		}
		t.Logf("round %d: p50 default %.3f ms, --quantum 0 %.3f ms, --quantum 2ms %.3f ms (best so far); lateness p50 default %.0f µs",
			round+1, p50["default"], p50["0"], p50["2ms"], lateP50["default"])
		problems = nil
		if d, z := p50["default"], p50["0"]; d > 1.25*z+0.05 {
			problems = append(problems, fmt.Sprintf("default p50 %.3f ms, --quantum 0's %.3f ms: the default does not send each request at its own time", d, z))
		}
		if d, g := p50["default"], p50["2ms"]; g < 1.3*d {
			problems = append(problems, fmt.Sprintf("default p50 %.3f ms, a 2 ms grid's %.3f ms: want the grid's bursts of 4 to queue (the signature the default must not have)", d, g))
		}
		if len(problems) == 0 {
			break
		}
	}
	if len(problems) > 0 {
		if lateP50["default"] > 200 {
			t.Skipf("the load CPU is too busy to compare latencies: the generator's median lateness was %.0f µs at best (%s)", lateP50["default"], strings.Join(problems, "; "))
		}
		// The provider's CPU shared with other work (go test runs packages
		// side by side): when one setting's median moved between repeats
		// by more than the gap being judged, the machine cannot tell them.
		noise := max(p50Max["default"]-p50["default"], p50Max["0"]-p50["0"])
		if gap := p50["default"] - p50["0"]; noise > gap || noise > 0.5*p50["0"] {
			t.Skipf("the provider's CPU is too busy to compare latencies: one setting's median moved %.3f ms between repeats (%s)", noise, strings.Join(problems, "; "))
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
	d := last["default"]
	if d.Arrival != "uniform" || d.QuantumMS != 0 || d.LatenessUS == nil || last["2ms"].QuantumMS != 2 {
		t.Errorf("default %+v; grid %+v", d, last["2ms"])
	}

	// The text says when latency was measured on a grid, and only then.
	_, plain := run()
	_, grid := run("--quantum", "2ms")
	if strings.Contains(plain, "release grid") || !strings.Contains(grid, "measured with a release grid of 2ms") {
		t.Errorf("default output:\n%s\ngrid output:\n%s", plain, grid)
	}
	if !strings.Contains(plain, "lateness") {
		t.Errorf("default output lacks the send lateness:\n%s", plain)
	}
	// Poisson arrivals, seeded: the same seed schedules the same requests.
	a, _ := run("--json", "--arrival", "poisson", "--seed", "5")
	b, _ := run("--json", "--arrival", "poisson", "--seed", "5")
	if a.Arrival != "poisson" || a.Seed != 5 || a.Scheduled != b.Scheduled || a.Scheduled == 4000 {
		t.Errorf("poisson runs: scheduled %d and %d (seed %d), want equal and not uniform's 4000", a.Scheduled, b.Scheduled, a.Seed)
	}
}

// TestRunPoissonArrivals runs a scenario with arrival: poisson: every trial
// records its send lateness and the seed of its arrivals, the same for both
// variants of a round and another in each round, so that a run repeats and
// variants meet the same load; the report says how requests arrived.
func TestRunPoissonArrivals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	path := tolltest.WriteScenario(t, "poisson", "  - name: baseline\n  - name: twin", `  rate: 100
  arrival: poisson
  warmup: 300ms
  duration: 1s
rounds: 2
seed: 9`)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out)
	if code != 0 && code != ExitInvalid {
		t.Fatalf("toll run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Arrivals: poisson, each request sent at its own time") {
		t.Errorf("report does not say how requests arrived:\n%s", stdout)
	}
	dir, err := record.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dir.ReadManifest()
	if err != nil {
		t.Fatal(err)
	}
	trials, _, err := dir.ReadTrials()
	if err != nil {
		t.Fatal(err)
	}
	if m.Load.Arrival != "poisson" || m.Load.QuantumS != 0 || len(trials) != 4 {
		t.Fatalf("manifest load %+v, %d trials", m.Load, len(trials))
	}
	seeds := map[int]uint64{}
	for _, tr := range trials {
		if tr.Load.LatenessP99US <= 0 || tr.Load.LatenessMaxUS < tr.Load.LatenessP99US || tr.Load.ArrivalSeed == 0 {
			t.Errorf("trial %d: lateness p99 %d max %d µs, arrival seed %d", tr.Index, tr.Load.LatenessP99US, tr.Load.LatenessMaxUS, tr.Load.ArrivalSeed)
		}
		if s, ok := seeds[tr.Round]; ok && s != tr.Load.ArrivalSeed {
			t.Errorf("round %d: arrival seeds %d and %d, want one per round", tr.Round, s, tr.Load.ArrivalSeed)
		}
		seeds[tr.Round] = tr.Load.ArrivalSeed
	}
	if seeds[1] == seeds[2] {
		t.Errorf("rounds 1 and 2 share the arrival seed %d", seeds[1])
	}
}

// TestLoadCPUHolderNamed runs a scenario while another process spins on the
// load generator's CPU: every trial names it among what ran on the load
// CPUs during its load, with most of that time, and names neither the
// run's toll nor its services (other tolls, under go test ./..., may be).
func TestLoadCPUHolderNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil || cpus.Count() < 2 {
		t.Skip("needs two CPUs to pin")
	}
	load := -1
	for c := range 1024 {
		if cpus.IsSet(c) {
			load = c
			break
		}
	}
	hog := exec.Command("sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	one := unix.CPUSet{}
	one.Set(load)
	if err := unix.SchedSetaffinity(hog.Process.Pid, &one); err != nil {
		t.Fatal(err)
	}
	// At a low priority, so that toll still runs (and sends) first; not the
	// lowest, at which a busy machine (load 20 on 2 cores) leaves the
	// spinner under a millisecond of a trial's 1.3 s, too little to name.
	if err := unix.Setpriority(unix.PRIO_PROCESS, hog.Process.Pid, 10); err != nil {
		t.Fatal(err)
	}
	// The spinner's CPU time as the kernel counts it, read every few
	// milliseconds while toll runs: what toll names it with must be what
	// the spinner got over the trial's load, however little a busy machine
	// (go test ./...'s other packages) left it at the lowest priority.
	spun := tolltest.SampleCPU(t, []int{hog.Process.Pid}, 5*time.Millisecond)
	path := tolltest.WriteScenario(t, "held", "  - name: baseline\n  - name: twin", fmt.Sprintf(`  rate: 100
  warmup: 300ms
  duration: 1s
rounds: 1
pinning: {load: "%d"}`, load))
	out := filepath.Join(t.TempDir(), "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	if code, stdout, stderr := tolltest.RunCommand(t, cmd); code != 0 && code != ExitInvalid {
		t.Fatalf("toll run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	self := cmd.Process.Pid // this run's toll, which names others only
	spin := spun()
	if len(spin) == 0 {
		t.Skipf("cannot read the schedstat of process %d", hog.Process.Pid)
	}
	trials := tolltest.ReadTrials(t, out)
	if len(trials) != 2 {
		t.Fatalf("%d trials, want 2", len(trials))
	}
	// named is the least CPU time on the load CPUs for which toll names a
	// holder (run's holderLeast).
	const named = time.Millisecond
	const slack = 15 * time.Millisecond // two samples' spacing, and some
	starved := 0
	for _, tr := range trials {
		var found bool
		for _, h := range tr.Load.LoadCPUsHeldBy {
			if h.PID == hog.Process.Pid {
				found = true
				if h.Name != "sh" || h.Kernel {
					t.Errorf("trial %d: the spinner read %+v, want sh, a process", tr.Index, h)
				}
				// toll reads just before the load's origin (its warm-up's
				// start) and after the window's end: at least what the
				// spinner got between the two, at most what it got from
				// a little before (newOrigin's lead, and some) to when
				// toll wrote the trial, after its reading, however long
				// a busy machine made that.
				least, _ := spin.Between(tr.Start, tr.MeasureEnd)
				written := tr.MeasureEnd.Add(time.Second)
				if fi, err := os.Stat(filepath.Join(out, "trials", fmt.Sprintf("%04d-%s.json", tr.Index, tr.Variant))); err == nil {
					written = fi.ModTime()
				}
				most, _ := spin.Between(tr.Start.Add(-300*time.Millisecond), written)
				t.Logf("trial %d: the spinner read %.1f ms; the kernel counted %.1f-%.1f ms", tr.Index, h.MS, least.Seconds()*1e3, most.Seconds()*1e3)
				if ms := time.Duration(h.MS * float64(time.Millisecond)); ms < least-slack || ms > most+slack {
					t.Errorf("trial %d: the spinner read %.1f ms; the kernel counted it %.1f ms over the load and %.1f ms from 0.3 s before to the trial's writing %v after",
						tr.Index, h.MS, least.Seconds()*1e3, most.Seconds()*1e3, written.Sub(tr.MeasureEnd))
				}
			}
			own := h.PID == self
			for _, svc := range tr.Services {
				own = own || h.PID == svc.Pid
			}
			if own {
				t.Errorf("trial %d names %+v: the run's own toll or one of its services", tr.Index, h)
			}
		}
		if found {
			continue
		}
		if tr.Load.LoadCPUsUnread {
			// toll could not read the machine's tasks in time around
			// this trial's load (a busy machine), and says so.
			t.Logf("trial %d: toll read no holders, a reading of the machine's tasks took too long", tr.Index)
			starved++
			continue
		}
		// Not named: right only if the spinner got too little of the load
		// CPU over the load to be named.
		if least, _ := spin.Between(tr.Start, tr.MeasureEnd); least >= named+slack {
			t.Errorf("trial %d does not name the process spinning on load CPU %d (pid %d), which the kernel counted %.1f ms over the load: %+v",
				tr.Index, load, hog.Process.Pid, least.Seconds()*1e3, tr.Load.LoadCPUsHeldBy)
		} else {
			t.Logf("trial %d: the spinner got %.1f ms of the load CPU over the load, too little to be named", tr.Index, least.Seconds()*1e3)
			starved++
		}
	}
	if starved == len(trials) {
		t.Skipf("the machine left the spinner too little of load CPU %d in every trial to check that toll names it", load)
	}
}
