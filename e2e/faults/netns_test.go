package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/cli"
	"github.com/tollperf/toll/e2e/tolltest"
	"github.com/tollperf/toll/record"
)

// writeIsolatedScenario writes a scenario whose provider, before it starts,
// writes the network interfaces it sees (/proc/net/dev) and its network
// namespace to files in dir; the consumer exports traces to toll's sink in
// the otel variant. network is the scenario's network line, or empty. A
// stubborn provider first starts a child that ignores SIGTERM, so that
// stopping it takes the grace period: a second signal sent during the stop
// finds toll still stopping, as it would a real service slow to exit.
func writeIsolatedScenario(t *testing.T, dir, network, duration string, stubborn bool) string {
	t.Helper()
	child := ""
	if stubborn {
		child = `(trap "" TERM; while :; do sleep 1; done) & `
	}
	s := fmt.Sprintf(`name: isolated
%s
services:
  - name: provider
    command: [sh, -c, '%scat /proc/net/dev > "$NETDEV"; readlink /proc/self/ns/net > "$NETNS"; exec "$0" app provider --addr "127.0.0.1:$1" --work 20000',
              "${toll}", "${port:provider}"]
    env: {NETDEV: %q, NETNS: %q}
    ready: {http: "http://127.0.0.1:${port:provider}/health", timeout: 10s}
  - name: consumer
    command: [toll, app, consumer, --addr, "127.0.0.1:${port:consumer}",
              --provider, "http://127.0.0.1:${port:provider}/provider", --work, "2000"]
    env: {OTEL_EXPORTER_OTLP_ENDPOINT: "${sink}"}
    ready: {http: "http://127.0.0.1:${port:consumer}/health", timeout: 10s}
    measure: true
variants:
  - name: baseline
  - name: otel
    exports: true
    services:
      consumer: {args: [--trace, otel]}
load:
  target: "http://127.0.0.1:${port:consumer}"
  requests: [{path: /consumer}]
  rate: 50
  warmup: 1s
  duration: %s
rounds: 1
`, network, child, filepath.Join(dir, "netdev"), filepath.Join(dir, "netns"), duration)
	path := filepath.Join(dir, "isolated.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// interfaces returns the interface names in a copy of /proc/net/dev.
func interfaces(t *testing.T, netdev string) []string {
	t.Helper()
	b, err := os.ReadFile(netdev)
	if err != nil {
		t.Fatalf("the service did not record its interfaces: %v", err)
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

// TestRunIsolatedNetwork runs toll with network isolation asked by the
// scenario or by the flag, and checks from inside a service that it ran in a
// new network namespace holding only loopback, that toll's load generator
// and telemetry sink still reached the services there, and that the
// manifest and the report say so.
func TestRunIsolatedNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	if os.Geteuid() != 0 {
		t.Skip("network isolation creates a network namespace, which needs root")
	}
	host, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		network string   // the scenario's network line
		flags   []string // toll run flags
	}{
		{"scenario", "network: isolated", nil},
		{"flag", "", []string{"--isolate-network"}},
		{"both", "network: host", []string{"--isolate-network"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeIsolatedScenario(t, dir, tt.network, "2s", false)
			out := filepath.Join(dir, "out")
			cmd := tolltest.Command(t, append([]string{"run", path, "--out", out}, tt.flags...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			// A run a busy machine made invalid (exit 3: late arrivals,
			// steal) still shows what isolation does.
			if err := cmd.Run(); err != nil && tolltest.ExitCode(err) != cli.ExitInvalid {
				t.Fatalf("toll run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			if got := interfaces(t, filepath.Join(dir, "netdev")); !slices.Equal(got, []string{"lo"}) {
				t.Errorf("the service saw interfaces %v, want [lo] alone", got)
			}
			if ns, _ := os.ReadFile(filepath.Join(dir, "netns")); strings.TrimSpace(string(ns)) == host {
				t.Errorf("the service ran in the host's network namespace %s", host)
			}
			var m record.Manifest
			b, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m.Layout.Network != "isolated" {
				t.Errorf("manifest layout.network = %q, want isolated", m.Layout.Network)
			}
			if !strings.Contains(stdout.String(), "network isolated (loopback only)") {
				t.Errorf("the report's footer does not say the network was isolated:\n%s", stdout.String())
			}
			if html, _ := os.ReadFile(filepath.Join(out, "report.html")); !strings.Contains(string(html), "isolated: a namespace of the run's own") {
				t.Errorf("report.html does not say the network was isolated")
			}
			s := tolltest.ReadSummary(t, out)
			for _, v := range []string{"baseline", "otel"} {
				if rps := s.Value(t, v, "throughput_rps"); rps < 40 {
					t.Errorf("%s: %.1f req/s of 50 reached the services", v, rps)
				}
			}
			if spans := s.Value(t, "otel", "spans_per_s"); spans <= 0 {
				t.Errorf("otel: the sink received %g spans/s: the exporter did not reach it", spans)
			}
		})
	}
}

// TestRunIsolatedNetworkInterrupt interrupts an isolated run, once (SIGINT)
// and twice (SIGINT then SIGTERM 50 ms apart): the signals sent to toll
// must reach toll in the namespace, which stops its services (at once on
// the second), writes its report and exits 130.
func TestRunIsolatedNetworkInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	if os.Geteuid() != 0 {
		t.Skip("network isolation creates a network namespace, which needs root")
	}
	for _, sigs := range [][]syscall.Signal{{syscall.SIGINT}, {syscall.SIGINT, syscall.SIGTERM}} {
		t.Run(fmt.Sprint(sigs), func(t *testing.T) {
			dir := t.TempDir()
			path := writeIsolatedScenario(t, dir, "network: isolated", "30s", true)
			out := filepath.Join(dir, "out")
			run := tolltest.Start(t, "run", path, "--out", out)

			var pids []int
			if !tolltest.Eventually(tolltest.Patience(t, 20*time.Second), func() bool {
				pids = run.Children(t) // toll in the namespace and its services
				return len(pids) >= 3
			}) {
				t.Fatalf("services did not start: pids %v\n%s", pids, run.Output())
			}
			// Into the first trial's 30 s window: its services may still be
			// starting once three processes run (the other variant's sink,
			// at load 20), and an interrupt then measured nothing to report.
			time.Sleep(tolltest.Patience(t, 1500*time.Millisecond))
			for i, sig := range sigs {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				run.Signal(sig)
			}
			if err := run.Wait(t, 20*time.Second); tolltest.ExitCode(err) != cli.ExitInterrupted {
				t.Errorf("exit %v, want %d\n%s", err, cli.ExitInterrupted, run.Output())
			}
			if n := strings.Count(run.Output(), "toll: interrupted;"); n != 1 {
				t.Errorf("%d interruption messages, want 1:\n%s", n, run.Output())
			}
			if n, want := strings.Count(run.Output(), "toll: interrupted again;"), len(sigs)-1; n != want {
				t.Errorf("%d messages of a second interruption, want %d:\n%s", n, want, run.Output())
			}
			if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
				t.Errorf("no report after %v: %v\n%s", sigs, err, run.Output())
			}
			for _, p := range tolltest.Outlived(pids, 5*time.Second) {
				t.Errorf("process %d is still running after %v", p, sigs)
			}
		})
	}
}

// TestIsolatedNetworkQuit sends SIGQUIT, Go's "print every goroutine and
// exit", to an isolated toll: the dump must hold the goroutines of the
// toll re-executed in the namespace, the one that runs the scenario, and
// not only those of the toll that waits for it; and no process is left.
func TestIsolatedNetworkQuit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	if os.Geteuid() != 0 {
		t.Skip("network isolation creates a network namespace, which needs root")
	}
	dir := t.TempDir()
	path := writeIsolatedScenario(t, dir, "network: isolated", "30s", false)
	run := tolltest.Start(t, "run", path, "--out", filepath.Join(dir, "out"))
	var pids []int
	if !tolltest.Eventually(tolltest.Patience(t, 20*time.Second), func() bool {
		pids = run.Children(t)
		return len(pids) >= 3
	}) {
		t.Fatalf("services did not start: pids %v\n%s", pids, run.Output())
	}
	run.Signal(syscall.SIGQUIT)
	run.Wait(t, 20*time.Second)
	out := run.Output()
	for _, frame := range []string{"netns.Reexec(", "run.Run("} {
		if !strings.Contains(out, frame) {
			t.Errorf("the dump has no %s frame:\n%s", frame, out)
		}
	}
	for _, p := range tolltest.Outlived(pids, 5*time.Second) {
		t.Errorf("process %d is still running after SIGQUIT", p)
	}
}

// TestIsolatedNetworkRefusals checks that toll never runs un-isolated when
// isolation was asked and cannot be had, and that a bad network value is
// reported at its line.
func TestIsolatedNetworkRefusals(t *testing.T) {
	tests := []struct {
		name     string
		network  string
		flags    []string
		noAdmin  bool // run toll without CAP_SYS_ADMIN
		wantExit int
		want     string // in the one-line error; %s is the scenario's path
	}{
		{"bogus value", "network: bogus", nil, false, cli.ExitUsage, `%s:2: network: "bogus" is not one of host, isolated`},
		{"flag without privilege", "", []string{"--isolate-network"}, true, cli.ExitFailure,
			"toll: --isolate-network: create network namespace: operation not permitted (run as root"},
		{"scenario without privilege", "network: isolated", nil, true, cli.ExitFailure,
			"toll: %s: network: isolated: create network namespace: operation not permitted (run as root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeIsolatedScenario(t, dir, tt.network, "2s", false)
			cmd := tolltest.Command(t, append([]string{"run", path, "--out", filepath.Join(dir, "out")}, tt.flags...)...)
			if tt.noAdmin {
				// Root without CAP_SYS_ADMIN is refused a network namespace
				// as an unprivileged user is.
				setpriv, err := exec.LookPath("setpriv")
				if err != nil || os.Geteuid() != 0 {
					t.Skip("needs root and setpriv to take CAP_SYS_ADMIN away")
				}
				cmd.Args = append([]string{setpriv, "--bounding-set", "-sys_admin"}, cmd.Args...)
				cmd.Path = setpriv
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.wantExit {
				t.Fatalf("exit %v, want %d; stderr:\n%s", err, tt.wantExit, stderr.String())
			}
			msg := strings.TrimSpace(stderr.String())
			want := tt.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, path)
			}
			if strings.Contains(msg, "\n") || !strings.Contains(msg, want) {
				t.Errorf("want one line containing\n  %s\ngot:\n%s", want, msg)
			}
			if _, err := os.Stat(filepath.Join(dir, "netdev")); err == nil {
				t.Errorf("a service ran although toll refused to")
			}
		})
	}
}
