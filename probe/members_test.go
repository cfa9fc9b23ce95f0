package probe_test

import (
	"os"
	"slices"
	"testing"

	"github.com/tollperf/toll/probe"
)

// TestMembersSamplesListed checks that Members reads the processes its list
// names at each sample, and skips those that are gone.
func TestMembersSamplesListed(t *testing.T) {
	cmd, _ := start(t, "sleep", "60")
	pids := []int{cmd.Process.Pid, 1 << 30} // the second does not exist
	m, err := probe.NewMembers(func() ([]int, error) { return pids, nil })
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if s.Procs != 1 || s.Threads < 1 {
		t.Errorf("sample of one sleep: %+v", s)
	}
	if got := m.Pids(); !slices.Equal(got, []int{cmd.Process.Pid}) {
		t.Errorf("Pids = %v, want [%d]", got, cmd.Process.Pid)
	}
	pids = append(pids, os.Getpid())
	// This process has memory and open files for certain (a process
	// just past exec may have neither yet).
	if s2, err := m.Sample(); err != nil || s2.Procs != 2 || s2.RSS <= s.RSS || s2.FDs <= s.FDs {
		t.Errorf("after adding this process: %+v, %v", s2, err)
	}
}
