package local

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tollperf/toll/backend"

	"github.com/tollperf/toll/record"
)

// TestHoldersSharedBySides checks that trials run at once share one
// reading of what ran on the load CPU: every side gets the same holders,
// a side's reading waits until the last side's load has ended, and a side
// that ends without a load does not hold the others up.
func TestHoldersSharedBySides(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Skip("no CPU affinity here:", err)
	}
	cpu := -1
	for c := 0; c < 1024 && cpu < 0; c++ {
		if allowed.IsSet(c) {
			cpu = c
		}
	}
	b := &Backend{loadCPUs: strconv.Itoa(cpu)}
	m := b.holders(3)

	var (
		wg      sync.WaitGroup
		got     [3][]record.CPUHolder
		ended   [3]time.Time
		lastOut time.Time // when the last side's load ended
	)
	// Another process, there before the loads, takes 100 ms of the load
	// CPU during side 2's load, then stays there (asleep) until the
	// reading after.
	burner := exec.Command("taskset", "-c", strconv.Itoa(cpu), "bash", "-c",
		`sleep 0.15; end=$((${EPOCHREALTIME/./} + 100000)); while ((${EPOCHREALTIME/./} < end)); do :; done; sleep 20`)
	if err := burner.Start(); err != nil {
		t.Fatal(err)
	}
	// The sides begin once bash runs its first sleep: the burn comes
	// after, in side 2's load.
	children := fmt.Sprintf("/proc/%d/task/%d/children", burner.Process.Pid, burner.Process.Pid)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(children); len(b) > 0 {
			break
		}
	}
	// Side 0 ends before its load (an error): it leaves without beginning.
	wg.Go(func() {
		m.leave()
		got[0], _ = m.end()
		ended[0] = time.Now()
	})
	// Side 1's load ends at once.
	wg.Go(func() {
		m.begin(time.Time{})
		m.leave()
		got[1], _ = m.end()
		ended[1] = time.Now()
	})
	// Side 2's load lasts while the other process burns.
	wg.Go(func() {
		m.begin(time.Time{})
		time.Sleep(500 * time.Millisecond)
		lastOut = time.Now()
		m.leave()
		got[2], _ = m.end()
		ended[2] = time.Now()
	})
	wg.Wait()
	// What the burner ran, by its own clock: on a busy machine its 100 ms
	// of wall time buy it less CPU, and the holders must show that much.
	ownMS := -1.0
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", burner.Process.Pid)); err == nil {
		var ns int64
		if _, err := fmt.Sscan(string(b), &ns); err == nil {
			ownMS = float64(ns) / 1e6
		}
	}
	burner.Process.Kill()
	burner.Wait()
	if b.holdersSlow > 0 {
		t.Skip("a reading of the machine's tasks took over", holderBudget, ": too busy to check")
	}
	for i := range got {
		if ended[i].Before(lastOut) {
			t.Errorf("side %d's reading ended %v before the last side's load", i, lastOut.Sub(ended[i]))
		}
		if !reflect.DeepEqual(got[i], got[0]) {
			t.Errorf("side %d read %+v, side 0 %+v: want one reading for all", i, got[i], got[0])
		}
	}
	var burnt float64
	for _, h := range got[2] {
		if h.PID == burner.Process.Pid {
			burnt = h.MS
		}
	}
	want := 50.0 // half the burn, where its clock cannot be read
	if ownMS >= 0 {
		want = min(want, ownMS/2)
	}
	if burnt < want || burnt == 0 {
		t.Errorf("holders %+v: want the process that took %.0f ms of CPU %d (pid %d) with at least %.0f ms", got[2], ownMS, cpu, burner.Process.Pid, want)
	}
}

// TestHoldersSlowReadings checks that a slow reading of the machine's
// tasks costs its trial its holders, and only holderStrikes of them in a
// row end the readings for the run, with one note.
func TestHoldersSlowReadings(t *testing.T) {
	ev := &noteTaker{}
	b := &Backend{loadCPUs: "0", events: ev}
	trial := func(budget time.Duration) bool {
		m := b.holders(1)
		if m.cpus == nil {
			return false // readings ended
		}
		m.budget = budget
		m.begin(time.Time{})
		m.leave()
		_, read := m.end()
		return read
	}
	const slow = time.Nanosecond
	for i := range holderStrikes - 1 {
		if trial(slow) {
			t.Errorf("a reading past its budget says it read the load CPUs")
		}
		if b.holdersOff {
			t.Fatalf("readings ended after %d slow ones, want %d in a row", i+1, holderStrikes)
		}
	}
	trial(time.Second) // one in time starts the count again
	for range holderStrikes - 1 {
		trial(slow)
	}
	if b.holdersOff {
		t.Fatalf("readings ended after %d slow ones not in a row", 2*(holderStrikes-1))
	}
	trial(slow)
	if !b.holdersOff || len(ev.notes) != 1 || !strings.Contains(ev.notes[0], "3 times in a row") {
		t.Fatalf("after %d slow readings in a row: off %v, notes %q; want off and one note", holderStrikes, b.holdersOff, ev.notes)
	}
	if m := b.holders(1); m.cpus != nil {
		t.Errorf("a meter after the readings ended still reads")
	}
}

// TestHoldersReadUntilTheLoad checks that the reading before a load may
// take the time left before the load is due, however short the budget of
// a reading (a busy machine makes readings slow), and no more.
func TestHoldersReadUntilTheLoad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ahead time.Duration // how far ahead the load is due
		read  bool
	}{
		{name: "a second ahead", ahead: time.Second, read: true},
		{name: "due now", ahead: 0, read: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Backend{loadCPUs: "0"}
			m := b.holders(1)
			m.budget = time.Nanosecond
			m.begin(time.Now().Add(tc.ahead))
			if read := m.before != nil; read != tc.read {
				t.Errorf("read %t with the load due in %v and a budget of %v, want %t", read, tc.ahead, m.budget, tc.read)
			}
		})
	}
}

// noteTaker keeps the notes a backend tells the orchestrator; the tests
// that use it call no other of its events.
type noteTaker struct {
	backend.Events
	notes []string
}

func (n *noteTaker) Note(note string) { n.notes = append(n.notes, note) }
