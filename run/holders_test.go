package run

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
	r := &runner{loadCPUs: strconv.Itoa(cpu)}
	m := r.holders(3)

	var (
		wg      sync.WaitGroup
		got     [3][]record.CPUHolder
		ended   [3]time.Time
		lastOut time.Time // when the last side's load ended
	)
	// Side 0 ends before its load (an error): it leaves without beginning.
	wg.Go(func() {
		m.leave()
		got[0], ended[0] = m.end(), time.Now()
	})
	// Side 1's load ends at once.
	wg.Go(func() {
		m.begin()
		m.leave()
		got[1], ended[1] = m.end(), time.Now()
	})
	// Side 2's load runs while another process, there before the load,
	// takes 100 ms of the load CPU, then stays there (asleep) until the
	// reading after.
	burner := exec.Command("taskset", "-c", strconv.Itoa(cpu), "bash", "-c",
		`sleep 0.15; end=$((${EPOCHREALTIME/./} + 100000)); while ((${EPOCHREALTIME/./} < end)); do :; done; sleep 20`)
	if err := burner.Start(); err != nil {
		t.Fatal(err)
	}
	// Read once taskset has become bash: not in the middle of an exec.
	comm := fmt.Sprintf("/proc/%d/comm", burner.Process.Pid)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(comm); string(b) == "bash\n" {
			break
		}
	}
	wg.Go(func() {
		m.begin()
		time.Sleep(500 * time.Millisecond)
		lastOut = time.Now()
		m.leave()
		got[2], ended[2] = m.end(), time.Now()
	})
	wg.Wait()
	burner.Process.Kill()
	burner.Wait()
	if r.holdersOff {
		t.Skip("the machine's tasks took over", holderBudget, "to read: too busy to check")
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
	if burnt < 50 {
		t.Errorf("holders %+v: want the process that took 100 ms of CPU %d (pid %d)", got[2], cpu, burner.Process.Pid)
	}
}
