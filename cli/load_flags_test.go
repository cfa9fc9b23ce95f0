package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestLoadFlagBounds checks that toll load refuses, before sending anything,
// the values a scenario may not hold either, with the flag named.
func TestLoadFlagBounds(t *testing.T) {
	const url = "http://127.0.0.1:1/" // never reached: every case is refused first
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "1e12"}, "load: --rate: 1e+12 req/s is above toll's limit of 1000000 req/s"},
		{[]string{"--rate", "NaN"}, "load: --rate: NaN is not a number of requests per second"},
		{[]string{"--rate", "+Inf"}, "load: --rate: +Inf is not a number"},
		{[]string{"--rate", "0"}, "load: --rate: 0 req/s is not positive"},
		{[]string{"--rate", "0.01", "-d", "10s"}, "load: --rate: 0.01 req/s sends no request in a 10s window"},
		{[]string{"--users", "100000000"}, "load: --users: 100000000 users each hold a connection to the target, more than the"},
		{[]string{"--users", "0"}, "load: --users: 0 users: must be at least 1"},
		{[]string{"--rate", "10", "--users", "2"}, "exclude each other"},
		{[]string{}, "give --rate N"},
		{[]string{"--rate", "10", "--max-conns", "0"}, "load: --max-conns: 0 connections: must be at least 1"},
		{[]string{"--rate", "10", "--max-conns", "10000000"}, "load: --max-conns: 10000000 connections each hold a connection"},
		{[]string{"--users", "2", "--max-conns", "10"}, "--max-conns applies to the open model only"},
		{[]string{"--rate", "10", "--think", "1s"}, "--think applies to the closed model only"},
		{[]string{"--rate", "10", "-d", "48h"}, "load: --duration: 48h0m0s is above toll's limit of 24h0m0s"},
		{[]string{"--rate", "10", "-d", "0s"}, "load: --duration 0s is not a window"},
		{[]string{"--rate", "10", "-d", "-1s"}, "load: --duration: -1s is negative"},
		{[]string{"--rate", "10", "--timeout", "5m"}, "load: --timeout: 5m0s is above toll's limit of 1m0s: latencies are recorded up to 60s"},
		{[]string{"--rate", "10", "--warmup", "-1s"}, "load: --warmup: -1s is negative"},
		{[]string{"--rate", "10", "--quantum", "2s"}, "load: --quantum: 2s is above toll's limit of 1s"},
		{[]string{"--rate", "10", "--arrival", "bursty"}, `load: --arrival: "bursty" is not one of uniform`},
		{[]string{"--rate", "10", "--seed", "3"}, "--seed applies to --arrival poisson only"},
		{[]string{"--users", "2", "--arrival", "poisson"}, "--arrival applies to the open model only"},
		{[]string{"--rate", "10", "-H", "X-A: a\r\nX-Evil: 1"}, "load: --header: the value of X-A holds a line break"},
		{[]string{"--rate", "10", "-H", "X A: b"}, `load: --header: "X A" is not a header name`},
		{[]string{"--rate", "10", "-H", "Content-Length: 5"}, "load: --header: Content-Length is set by toll's load generator"},
		{[]string{"--rate", "10", "-H", "novalue"}, `load: --header "novalue": want "Name: value"`},
		{[]string{"--rate", "10", "--body", strings.Repeat("b", 65537)}, "load: --body: 65537 bytes is above toll's limit of 64 KiB"},
	}
	for _, tt := range tests {
		cmd := newLoadCmd()
		cmd.SetArgs(append([]string{url}, tt.args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.ExecuteContext(context.Background())
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != ExitUsage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("toll load %q: %v, want exit %d with %q", tt.args, err, ExitUsage, tt.want)
		}
	}
}

// TestLoadInterruptedThroughput checks that an interrupted toll load
// reports its throughput over the part of the window that ran, not over
// the whole window it was asked for.
func TestLoadInterruptedThroughput(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	cmd := tolltest.Command(t, "load", srv.URL, "--rate", "200", "-d", "20s", "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); tolltest.ExitCode(err) != ExitInterrupted {
		t.Fatalf("exit %v, want %d; stderr %s", err, ExitInterrupted, stderr.String())
	}
	var s loadSummary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if s.Scheduled != s.Sent+s.Missed || s.Completed == 0 {
		t.Errorf("summary %+v", s)
	}
	// About 200 req/s over about 1.5 s; over 20 s it would read about 15.
	if s.Throughput < 100 || s.Throughput > 400 {
		t.Errorf("throughput %.1f req/s of %d completed, want about 200", s.Throughput, s.Completed)
	}
}
