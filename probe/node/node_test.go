package node

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollperf/toll/probe/runtime"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]float64
		err      bool
	}{
		{"line", `{"heap_used":4194304,"gc_count":3,"gc_time":0.0125,"loop_busy":1.5}` + "\n",
			map[string]float64{"heap_used": 4 << 20, "gc_count": 3, "gc_time": 0.0125, "loop_busy": 1.5}, false},
		{"empty", "", nil, true},
		{"half", `{"heap_used":41`, nil, true},
		{"not a number", `{"heap_used":"4"}`, nil, true},
	}
	for _, tt := range tests {
		got, err := Parse(strings.NewReader(tt.in))
		if (err != nil) != tt.err {
			t.Errorf("%s: error %v, want one: %v", tt.name, err, tt.err)
			continue
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", tt.name, k, got[k], v)
			}
		}
	}
}

// TestStaleFileNotRead: a stats file left behind by a process that exited
// on a signal is not taken for a live one.
func TestStaleFileNotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "42")
	os.WriteFile(path, []byte(`{"heap_used":1}`), 0o644)
	p := &Process{path: path, pid: 42}
	if _, err := p.Read(); err != nil {
		t.Fatalf("fresh file: %v", err)
	}
	old := time.Now().Add(-2 * staleAfter)
	os.Chtimes(path, old, old)
	if _, err := p.Read(); err == nil {
		t.Error("a stale file was read")
	}
}

// TestLive runs Node with tollstats.cjs preloaded and a script that
// allocates, and reads it as toll's sampler does: every metric has a
// value, and the heap and collections are those of a process that
// allocated.
func TestLive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Node.js")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node (apt-get install nodejs): ", err)
	}
	script := `let keep = []; setInterval(() => { for (let i = 0; i < 2000; i++) keep.push({i, s: 'x'.repeat(64)}); if (keep.length > 200000) keep = []; }, 5); console.log('up');`
	cmd := exec.Command("node", "--require", "./tollstats.cjs", "-e", script)
	cmd.Env = append(os.Environ(), "TOLL_NODE_STATS_MS=50")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("node: %v %q", err, line)
	}
	if _, err := (Runtime{}).Find("/proc", []int{os.Getpid()}); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("found Node in the test's own process: %v", err)
	}
	var p runtime.Process
	var err error
	for range 50 {
		if p, err = (Runtime{}).Find("/proc", []int{cmd.Process.Pid}); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Killed, Node leaves its file behind.
	t.Cleanup(func() { os.Remove(p.(*Process).path) })
	time.Sleep(time.Second)
	v, err := p.Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range (Runtime{}).Metrics() {
		if _, ok := v[m.Name]; !ok {
			t.Errorf("no %s in %v", m.Name, v)
		}
	}
	if v["heap_used"] < 1<<20 || v["gc_count"] < 1 || v["gc_time"] <= 0 || v["loop_busy"] <= 0 {
		t.Errorf("reading %v: want a heap of MiB, collections and a busy loop", v)
	}
	if p.Pid() != cmd.Process.Pid {
		t.Errorf("pid %d, want %d", p.Pid(), cmd.Process.Pid)
	}
}
