package probe_test

import (
	"errors"
	"io/fs"
	"os/exec"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/tollperf/toll/probe"
)

// burnLoop keeps a shell busy for a few seconds at most, without forking.
const burnLoop = `i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done`

func TestProcessTreeCPU(t *testing.T) {
	const (
		burn    = 600 * time.Millisecond
		minBurn = 100 * time.Millisecond // of the burn's wall time, on a busy 2-core machine
	)
	tests := []struct {
		name   string
		script string
		ready  string // line the script prints when its burning is over
		procs  int    // processes in the tree at the end
		// rootAlone says whether the root process burns by itself; if not,
		// its own CPU must stay small, so the tree's CPU came from its
		// descendants.
		rootAlone bool
	}{
		{
			name:      "busy process",
			script:    burnLoop,
			procs:     1,
			rootAlone: true,
		},
		{
			name:   "busy child of a wrapper",
			script: `sh -c '` + burnLoop + `' & wait`,
			procs:  2,
		},
		{
			name:   "reaped child",
			script: `sh -c '` + burnLoop + `' & p=$!; sleep 0.6; kill $p; wait $p; echo reaped; exec sleep 100`,
			ready:  "reaped",
			procs:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, out := startScript(t, tt.script)
			tree := newTree(t, cmd.Process.Pid)
			before := sample(t, tree)
			var after probe.Sample
			if tt.ready != "" {
				waitLine(t, out, tt.ready)
				after = sample(t, tree)
			} else {
				// A busy machine gives the burn less than its wall time:
				// sample until the tree has burnt minBurn, which a tree
				// that misses the burning process never does.
				time.Sleep(burn)
				after = sample(t, tree)
				for deadline := time.Now().Add(10 * time.Second); after.CPU-before.CPU < minBurn && time.Now().Before(deadline); {
					time.Sleep(50 * time.Millisecond)
					after = sample(t, tree)
				}
			}
			if got := after.CPU - before.CPU; got < minBurn {
				t.Errorf("CPU rose by %v over %v of burning, want at least %v", got, burn, minBurn)
			}
			if after.CPU != after.User+after.System {
				t.Errorf("CPU %v != User %v + System %v", after.CPU, after.User, after.System)
			}
			if after.User <= before.User {
				t.Errorf("User did not rise: %v then %v", before.User, after.User)
			}
			if after.Procs != tt.procs {
				t.Errorf("Procs = %d, want %d", after.Procs, tt.procs)
			}
			if !tt.rootAlone {
				own := ownCPU(t, cmd.Process.Pid)
				if own > (after.CPU-before.CPU)/4 {
					t.Errorf("root's own CPU %v is not small next to the tree's rise %v: the test proves nothing", own, after.CPU-before.CPU)
				}
			}
		})
	}
}

// ownCPU returns the CPU time of pid itself, without reaped children.
func ownCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	p, err := procfs.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

func TestProcessTreeMembers(t *testing.T) {
	// The scripts print "ready" once their processes exist, and do not exec
	// after that: a process sampled while it execs may have no RSS yet.
	tests := []struct {
		name       string
		argv       []string
		ready      string
		procs      int
		minThreads int
		minFDs     int
	}{
		{"single", []string{"sleep", "100"}, "", 1, 1, 3},
		{"wrapper with children", sh(`sleep 100 & sleep 100 & echo ready; wait`), "ready", 3, 3, 9},
		{"grandchild", sh(`sh -c 'sleep 100 & echo ready; wait' & wait`), "ready", 3, 3, 9},
		{"children started later", sh(`sleep 0.3; sleep 100 & echo ready; wait`), "ready", 2, 2, 6},
		{"orphan leaves the tree", sh(`(sleep 100 &); sleep 100 & echo ready; wait`), "ready", 2, 2, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, out := start(t, tt.argv...)
			tree := newTree(t, cmd.Process.Pid) // before the children exist, mostly
			if tt.ready != "" {
				waitLine(t, out, tt.ready)
			}
			var s probe.Sample
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				// A process just started may not have exec'd yet (Go forks
				// with a shared address space), and then has no RSS of its own.
				if s = sample(t, tree); s.Procs == tt.procs && s.RSS > 0 {
					break
				}
			}
			if s.Procs != tt.procs {
				t.Errorf("Procs = %d, want %d", s.Procs, tt.procs)
			}
			if s.RSS == 0 {
				t.Error("RSS = 0")
			}
			if s.Threads < tt.minThreads {
				t.Errorf("Threads = %d, want at least %d", s.Threads, tt.minThreads)
			}
			if s.FDs < tt.minFDs {
				t.Errorf("FDs = %d, want at least %d", s.FDs, tt.minFDs)
			}
			if s.Time.IsZero() || time.Since(s.Time) > 5*time.Second {
				t.Errorf("Time = %v", s.Time)
			}
		})
	}
}

func TestProcessTreeGone(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) (pid int, whenSampling func() (probe.Sample, error))
	}{
		{
			name: "reaped before NewProcessTree",
			setup: func(t *testing.T) (int, func() (probe.Sample, error)) {
				cmd := exec.Command("true")
				if err := cmd.Run(); err != nil {
					t.Fatal(err)
				}
				return cmd.Process.Pid, nil
			},
		},
		{
			name: "zombie before NewProcessTree",
			setup: func(t *testing.T) (int, func() (probe.Sample, error)) {
				cmd := exec.Command("true")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Wait() })
				waitZombie(t, cmd.Process.Pid)
				return cmd.Process.Pid, nil
			},
		},
		{
			name: "exited after NewProcessTree",
			setup: func(t *testing.T) (int, func() (probe.Sample, error)) {
				cmd := exec.Command("sleep", "100")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				tree := newTree(t, cmd.Process.Pid)
				sample(t, tree)
				cmd.Process.Kill()
				cmd.Wait()
				return 0, tree.Sample
			},
		},
		{
			name: "zombie after NewProcessTree",
			setup: func(t *testing.T) (int, func() (probe.Sample, error)) {
				cmd := exec.Command("sleep", "100")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Wait() })
				tree := newTree(t, cmd.Process.Pid)
				cmd.Process.Kill()
				waitZombie(t, cmd.Process.Pid)
				return 0, tree.Sample
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pid, sampleLater := tt.setup(t)
			var err error
			if sampleLater == nil {
				_, err = probe.NewProcessTree(pid)
			} else {
				_, err = sampleLater()
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v does not match fs.ErrNotExist", err)
			}
		})
	}
}

// waitZombie waits up to 2 s for pid to become a zombie.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		p, err := procfs.NewProc(pid)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := p.Stat(); err == nil && st.State == "Z" {
			return
		}
	}
	t.Fatalf("process %d not a zombie after 2s", pid)
}

// sh returns the argv that runs script with /bin/sh.
func sh(script string) []string {
	return []string{"/bin/sh", "-c", script}
}

// TestDescendantsLeaveOutRoot samples the tree below a shell that stands for
// toll's supervisor: the shell's own process, threads and files are not
// counted, the CPU of the child it reaped is.
func TestDescendantsLeaveOutRoot(t *testing.T) {
	// A shorter burn than burnLoop's: it must end within waitLine's 5 s on a
	// busy machine.
	const burn = `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done`
	cmd, out := startScript(t, `sh -c '`+burn+`'; sleep 100 & echo ready; wait`)
	below, err := probe.NewDescendants(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	waitLine(t, out, "ready")
	whole := newTree(t, cmd.Process.Pid)
	var s, w probe.Sample
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s, w = sample(t, below), sample(t, whole); s.Procs == 1 && w.Procs == 2 && s.RSS > 0 {
			break
		}
	}
	if s.Procs != 1 || w.Procs != 2 {
		t.Fatalf("Procs = %d below the root and %d with it, want 1 and 2", s.Procs, w.Procs)
	}
	if s.Threads != w.Threads-1 || s.FDs >= w.FDs || s.RSS >= w.RSS {
		t.Errorf("below the root: %d threads, %d files, RSS %d; with it: %d, %d, %d: the root's own are counted",
			s.Threads, s.FDs, s.RSS, w.Threads, w.FDs, w.RSS)
	}
	if own := ownCPU(t, cmd.Process.Pid); s.CPU < 20*time.Millisecond || s.CPU > w.CPU-own+10*time.Millisecond {
		t.Errorf("CPU below the root %v, whole tree %v, root's own %v: want the reaped burn and not the root's own", s.CPU, w.CPU, own)
	}
}
