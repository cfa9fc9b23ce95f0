package faults

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestSinkUnderAttack runs a short toll run and, once its first trial is
// written, attacks that variant's sink as issue #19 did: 8 gzip bombs
// (about 1 MiB on the wire, 1 GiB decoded) in parallel and 20 uploads that
// announce a Content-Length of 10¹² and send nothing. toll's peak RSS
// (VmHWM) must stay under 100 MB, the run must succeed, and report.md must
// show the rejected requests.
func TestSinkUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services under load")
	}
	dir := t.TempDir()
	// Each variant's "sinkurl" service writes its ${sink} where the test
	// finds it, then idles. Five rounds (about 30 s) leave the attack time
	// to be answered by a sink starved of CPU before the run ends and stops
	// it: with three, in a CI run, the bombs still in flight were cut off
	// (connection reset).
	variants := `  - name: baseline
  - name: other`
	s := fmt.Sprintf(`name: attack
services:
  - name: provider
    command: [toll, app, provider, --addr, "127.0.0.1:${port:provider}", --work, "2000"]
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 10s}
    measure: true
  - name: sinkurl
    command: [sh, -c, 'printf %%s "$1" > "$2.tmp" && mv "$2.tmp" "$2" && exec sleep 600', sh, "${sink}", "%s/${variant}.sink"]
variants:
%s
load:
  target: "http://127.0.0.1:${port:provider}"
  requests:
    - {name: provider, method: GET, path: /provider}
  rate: 20
  warmup: 1s
  duration: 2s
rounds: 5
`, dir, variants)
	path := filepath.Join(dir, "attack.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := tolltest.Command(t, "run", path, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// A run that has not ended in 90 s is stopped with a dump of its
	// goroutines (tolltest.Quit), which the failure below prints.
	timeout := time.AfterFunc(90*time.Second, func() { _ = tolltest.Quit(cmd) })
	defer timeout.Stop()

	// The peak RSS of toll and of its sinks (each variant's toll _sink
	// process), read until toll exits.
	var hwm, sinkHWM int64
	watch := func() {
		if kb, ok := vmHWM(cmd.Process.Pid); ok {
			hwm = max(hwm, kb)
		}
		for _, p := range tolltest.Descendants(t, cmd.Process.Pid) {
			if !tolltest.IsSink(p) {
				continue
			}
			if kb, ok := vmHWM(p); ok {
				sinkHWM = max(sinkHWM, kb)
			}
		}
	}

	// Wait for the first trial file, then attack that variant's sink: its
	// later trials' cycles cover the attack.
	var victim string
	attacked := make(chan struct{})
	var runErr error
	done := false
	for !done {
		select {
		case runErr = <-exited:
			done = true
			continue
		case <-time.After(50 * time.Millisecond):
		}
		watch()
		if victim != "" {
			continue
		}
		trials, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
		if len(trials) == 0 {
			continue
		}
		m := regexp.MustCompile(`^\d+-(.+)\.json$`).FindStringSubmatch(filepath.Base(trials[0]))
		if m == nil {
			t.Fatalf("trial file %s: unexpected name", trials[0])
		}
		victim = m[1]
		url, err := os.ReadFile(filepath.Join(dir, victim+".sink"))
		if err != nil {
			t.Fatalf("the %s variant's sink URL: %v", victim, err)
		}
		var sinks []int
		for _, p := range tolltest.Descendants(t, cmd.Process.Pid) {
			if tolltest.IsSink(p) {
				sinks = append(sinks, p)
			}
		}
		go func() {
			defer close(attacked)
			attack(t, string(url), sinks)
		}()
	}
	watch()
	if victim == "" {
		t.Fatalf("toll run ended before its first trial was written: %v\nstdout:\n%s\nstderr:\n%s", runErr, stdout.String(), stderr.String())
	}
	<-attacked
	if runErr != nil {
		t.Fatalf("toll run: %v\nstdout:\n%s\nstderr:\n%s", runErr, stdout.String(), stderr.String())
	}
	t.Logf("peak RSS (VmHWM): toll %.1f MB, the sinks' largest %.1f MB", float64(hwm)*1024/1e6, float64(sinkHWM)*1024/1e6)
	if hwm == 0 || sinkHWM == 0 {
		t.Fatal("never read the VmHWM of toll or of its sinks")
	}
	if hwm*1024 >= 100e6 {
		t.Errorf("toll's peak RSS was %.1f MB under attack, want under 100 MB", float64(hwm)*1024/1e6)
	}
	if sinkHWM*1024 >= 100e6 {
		t.Errorf("the attacked sink's peak RSS was %.1f MB, want under 100 MB", float64(sinkHWM)*1024/1e6)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(md), "\n") {
		if strings.Contains(line, "rejected") {
			t.Log(line)
		}
	}
	if !strings.Contains(string(md), "exports rejected (/s)") || !strings.Contains(string(md), "telemetry rejected (KiB/s)") {
		t.Errorf("report.md has no rows of rejected exports (the %s variant's sink was attacked):\n%s", victim, md)
	}
}

// vmHWM returns the peak resident set of process pid, in KiB.
func vmHWM(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// attack sends 8 gzip bombs in parallel and opens 20 uploads that announce
// 10¹² bytes and send none to the sink at url, and waits for every answer.
// Each must be refused. On a quiet machine the answer is 413; the sink runs
// at idle priority, and on a machine busy with other work (go test ./...'s
// other packages, or two spinners beside this test alone, 2026-11-26) it
// waits for the CPU past its 1 s decode wait and answers a bomb 503 (busy,
// Retry-After), and Go's server has answered a stalled upload 400: a
// refusal all the same. What must never happen is a bomb accepted.
//
// A request that gets no answer at all (the client's timeout, or the
// connection closed when the run ends and stops the sink) fails the test
// unless the sinks (pids) were starved meanwhile: at idle priority, other
// work on their CPU can hold them off for as long as it runs, and under
// go test ./... it has held one off past the client's 20 s. Starved is
// waiting to run, while runnable, longer than they ran and for at least
// 2 s in all; a sink that hangs waits for nothing.
func attack(t *testing.T, url string, pids []int) {
	starved := tolltest.SampleCPU(t, pids, 100*time.Millisecond)
	var mu sync.Mutex
	var unanswered []error
	noAnswer := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		unanswered = append(unanswered, err)
	}
	defer func() {
		ran, wait := starved().Growth()
		t.Logf("during the attack the sinks waited %v to run and ran %v", wait.Round(time.Millisecond), ran.Round(time.Millisecond))
		if len(unanswered) == 0 {
			return
		}
		if wait >= 2*time.Second && wait > ran {
			t.Logf("%d requests got no answer while the sinks waited %v to run and ran %v (starved at idle priority): %v", len(unanswered), wait.Round(time.Millisecond), ran.Round(time.Millisecond), unanswered[0])
			return
		}
		for _, err := range unanswered {
			t.Errorf("no answer, though the sinks waited only %v to run and ran %v: %v", wait.Round(time.Millisecond), ran.Round(time.Millisecond), err)
		}
	}()

	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	bomb := bytes.Repeat(member.Bytes(), 1024) // 1 GiB of zeros, about 1 MiB

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			conn, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), 5*time.Second)
			if err != nil {
				noAnswer(fmt.Errorf("stalled upload: %w", err))
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: sink\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000000000000\r\n\r\n")
			_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			b := make([]byte, 512)
			n, err := io.ReadAtLeast(conn, b, 12)
			if n == 0 && err != nil {
				noAnswer(fmt.Errorf("stalled upload: %w", err))
				return
			}
			if !refusedLine(b[:n]) {
				t.Errorf("stalled upload answered %q, want a refusal (413)", b[:n])
			}
		})
	}
	client := &http.Client{Timeout: 20 * time.Second}
	for range 8 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, url+"/v1/traces", bytes.NewReader(bomb))
			req.Header.Set("Content-Type", "application/x-protobuf")
			req.Header.Set("Content-Encoding", "gzip")
			resp, err := client.Do(req)
			if err != nil {
				noAnswer(fmt.Errorf("gzip bomb: %w", err))
				return
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if !refused(resp.StatusCode) {
				t.Errorf("gzip bomb answered %d, want a refusal (413): %q", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
}

// refused says whether an HTTP status refuses a request: 413, or under a
// starved sink 503 (busy) or 400 (Go's server); see attack.
func refused(status int) bool {
	switch status {
	case http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable, http.StatusBadRequest:
		return true
	}
	return false
}

// refusedLine says whether a raw HTTP response begins with a status that
// refuses the request.
func refusedLine(b []byte) bool {
	_, rest, ok := bytes.Cut(b, []byte(" "))
	if !ok || !bytes.HasPrefix(b, []byte("HTTP/1.")) || len(rest) < 3 {
		return false
	}
	status, err := strconv.Atoi(string(rest[:3]))
	return err == nil && refused(status)
}
