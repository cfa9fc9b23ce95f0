package load

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary serve HTTP as a separate process, which the
// stall test stops with SIGSTOP.
func TestMain(m *testing.M) {
	if file := os.Getenv("TOLL_LOAD_TEST_SERVER"); file != "" {
		serveForTest(file)
		return
	}
	os.Exit(m.Run())
}

func serveForTest(addrFile string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(1)
	}
	if err := os.WriteFile(addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
		os.Exit(1)
	}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
}

// startServerProcess starts the test binary as an HTTP server and returns
// its address and process.
func startServerProcess(t *testing.T) (string, *os.Process) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TOLL_LOAD_TEST_SERVER="+file)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	for range 200 {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			return string(b), cmd.Process
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("test server did not start")
	return "", nil
}

// TestStalledTargetShows stops the target process for 0.5 s in the middle
// of a 5,000 req/s window: the stall must show in the latency of the
// requests scheduled during it (as wrk2 shows it, and fortio does not), and
// every scheduled request must be sent or counted as missed.
func TestStalledTargetShows(t *testing.T) {
	addr, proc := startServerProcess(t)
	start := soon()
	time.AfterFunc(time.Until(start.Add(1500*time.Millisecond)), func() {
		proc.Signal(syscall.SIGSTOP)
		time.Sleep(500 * time.Millisecond)
		proc.Signal(syscall.SIGCONT)
	})
	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: "http://" + addr + "/"}},
		Pacer:    ConstantPacer{Rate: 1000}, // what a busy 2-core machine sustains (5000/s did not at load 20)
		Quantum:  time.Millisecond,
		Start:    start,
		Warmup:   500 * time.Millisecond,
		Duration: 3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if res.Scheduled != 3000 {
		t.Errorf("Scheduled = %d, want exactly 3000 (1000/s for 3 s)", res.Scheduled)
	}
	// 500 of the 3,000 requests were due during the stall, waiting up to
	// 500 ms: more than 1% waited longer than 250 ms.
	if p99 := res.Latency.ValueAtQuantile(99); p99 < 250_000 {
		t.Errorf("p99 = %.1f ms, want >= 250 ms: the stall is hidden", float64(p99)/1000)
	}
	if p50 := res.Latency.ValueAtQuantile(50); p50 > 100_000 {
		t.Errorf("p50 = %.1f ms: more than the stall's requests were slow", float64(p50)/1000)
	}
	t.Logf("p50 %.2f ms, p99 %.1f ms, max %.1f ms, %d connections, %d missed",
		float64(res.Latency.ValueAtQuantile(50))/1000, float64(res.Latency.ValueAtQuantile(99))/1000,
		float64(res.Latency.Max())/1000, res.Connections, res.Missed)
}

func TestClosedModel(t *testing.T) {
	var inFlight, peak atomic.Int64
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}))
	defer srv.Close()

	const users, think = 4, 20 * time.Millisecond
	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}},
		Users:    &Users{N: users, Think: think, Ramp: 100 * time.Millisecond},
		Start:    soon(),
		Warmup:   200 * time.Millisecond,
		Duration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	// Each user sends at most one request per think time plus response.
	if max := uint64(users * (time.Second/think + 1)); res.Sent > max {
		t.Errorf("Sent = %d, more than %d users thinking %s can send in 1 s", res.Sent, users, think)
	}
	if res.Sent < users*5 {
		t.Errorf("Sent = %d: the users hardly sent anything", res.Sent)
	}
	if res.Missed != 0 || res.Scheduled != res.Sent || res.OK != res.Completed {
		t.Errorf("Scheduled %d, Sent %d, Missed %d, OK %d of %d", res.Scheduled, res.Sent, res.Missed, res.OK, res.Completed)
	}
	if p := peak.Load(); p > users {
		t.Errorf("%d requests in flight at once, more than %d users", p, users)
	}
	mu.Lock()
	seen := len(conns)
	mu.Unlock()
	if seen != users || res.Connections != users {
		t.Errorf("%d connections seen by the server, %d opened; want one per user, %d", seen, res.Connections, users)
	}

	// Exponential think times average the same.
	res2, err := runLoad(t, context.Background(), Config{
		Requests: []Request{{URL: srv.URL}},
		Users:    &Users{N: users, Think: think, ExponentialThink: true},
		Start:    soon(),
		Duration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if ratio := float64(res2.Sent) / float64(res.Sent); ratio < 0.5 || ratio > 2 {
		t.Errorf("exponential think sent %d, constant %d: the mean think time differs", res2.Sent, res.Sent)
	}
}

func TestTemplatingAndPerRequestResults(t *testing.T) {
	var mu sync.Mutex
	var ids []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/bad/") {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/item/"))
		if err != nil || r.Header.Get("X-Request-Id") != fmt.Sprint(id) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
	}))
	defer srv.Close()

	res, err := runLoad(t, context.Background(), Config{
		Requests: []Request{
			{Name: "item", URL: srv.URL + "/item/${id}", Header: http.Header{"X-Request-Id": {"${id}"}}, Weight: 3},
			{Name: "bad", URL: srv.URL + "/bad/${id}"},
		},
		Pacer:    ConstantPacer{Rate: 100}, // all sent on a busy machine (at 400/s, load 20 missed a quarter)
		Start:    soon(),
		Duration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, res)
	if len(res.Requests) != 2 {
		t.Fatalf("%d per-request results, want 2", len(res.Requests))
	}
	item, bad := res.Requests[0], res.Requests[1]
	if item.Name != "item" || item.Sent != 75 || item.OK != 75 || item.Errors.Total() != 0 {
		t.Errorf("item: %+v, want 75 sent and OK", item)
	}
	if bad.Name != "bad" || bad.Sent != 25 || bad.Errors.HTTP5xx != 25 || bad.OK != 0 {
		t.Errorf("bad: %+v, want 25 sent, all 5xx", bad)
	}
	if item.Latency.TotalCount()+bad.Latency.TotalCount() != int64(res.Completed) {
		t.Errorf("per-request histograms hold %d+%d values, want %d", item.Latency.TotalCount(), bad.Latency.TotalCount(), res.Completed)
	}
	// Ids are the requests' numbers: distinct, and the items' are the
	// positions the mix gave them in 1..100.
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(ids)
	if len(slices.Compact(ids)) != 75 || ids[0] < 1 || ids[len(ids)-1] > 100 {
		t.Errorf("server saw %d distinct ids from %d to %d, want 75 in 1..100", len(ids), ids[0], ids[len(ids)-1])
	}
}

// TestSendDoesNotAllocate checks the hot path: rendering, writing and
// parsing a response allocate nothing once a connection is open. The server
// is another process, so that its allocations are not counted.
func TestSendDoesNotAllocate(t *testing.T) {
	addr, _ := startServerProcess(t)
	r, err := newRunner(Config{
		Requests: []Request{{URL: "http://" + addr + "/x/${id}"}},
		Pacer:    ConstantPacer{Rate: 1},
		Duration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.ctx = context.Background()
	c := r.newClient()
	defer c.close()
	id := uint64(0)
	send := func() {
		id++
		if status, err := c.send(&r.targets[0], id); err != nil || status != 200 {
			t.Fatalf("status %d, err %v", status, err)
		}
	}
	send() // opens the connection
	if n := testing.AllocsPerRun(200, send); n > 0 {
		t.Errorf("%.1f allocations per request", n)
	}
}
