package profile

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain makes the test binary a CPU burner when asked, for a process
// to sample whose hot function is known.
func TestMain(m *testing.M) {
	if os.Getenv("TOLL_PROFILE_TEST_BURN") == "1" {
		burnCPU(time.Now().Add(20 * time.Second))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// burnCPU spins until deadline.
//
//go:noinline
func burnCPU(deadline time.Time) {
	x := uint64(1)
	for time.Now().Before(deadline) {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 42 {
		println(x)
	}
}

// TestPerfSamplesKnownFunction samples a process burning CPU beside
// another, in each way perf can be scoped to processes: the samples are
// the target's, most in its hot function, and stand for no more CPU than
// its one thread had.
func TestPerfSamplesKnownFunction(t *testing.T) {
	for _, tt := range []struct {
		name string
		sc   scope
	}{
		{"every CPU, the target's samples kept", scopeAll},
		{"the target's processes", scopeProcesses},
	} {
		t.Run(tt.name, func(t *testing.T) { testPerfSamples(t, tt.sc) })
	}
}

func testPerfSamples(t *testing.T, sc scope) {
	p := Perf{Dir: t.TempDir()}
	ctx := context.Background()
	if err := p.Available(ctx); err != nil {
		t.Skip(err)
	}
	spin := func() *exec.Cmd {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), "TOLL_PROFILE_TEST_BURN=1")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			c.Process.Kill()
			c.Wait()
		})
		return c
	}
	// The other burner takes the other CPU: sampled too, the window
	// would hold two threads' CPU.
	burner, _ := spin(), spin()
	s, err := p.start(ctx, Target{Service: "burner", Pids: []int{burner.Process.Pid}}, sc)
	if err != nil {
		if sc == scopeAll {
			t.Skipf("perf cannot sample every CPU here: %v", err)
		}
		t.Fatal(err)
	}
	from := time.Now()
	time.Sleep(1500 * time.Millisecond)
	w := Window{Start: from, End: time.Now()}
	prof, err := s.Stop(w)
	if err != nil {
		t.Fatal(err)
	}
	var total, burn, cpu int64
	for _, smp := range prof.Sample {
		total += smp.Value[0]
		cpu += smp.Value[1]
		if sec := smp.NumLabel[LabelSecond][0]; sec < 0 || sec > 1 {
			t.Errorf("a sample in second %d of a 1.5 s window", sec)
		}
		if got := smp.Label[LabelService]; len(got) != 1 || got[0] != "burner" {
			t.Errorf("service label %v", got)
		}
		for _, l := range smp.Location {
			if strings.HasSuffix(l.Line[0].Function.Name, ".burnCPU") {
				burn += smp.Value[0]
				break
			}
		}
	}
	if total == 0 {
		t.Fatal("no samples of a process burning CPU")
	}
	if burn*2 < total {
		t.Errorf("%d of %d samples in burnCPU, want most; the first: %v", burn, total, prof.Sample[0].Location[0].Line[0].Function.Name)
	}
	// The samples stand for at most the window's length of one thread's
	// CPU (with a margin for the sampling's granularity).
	if max := w.End.Sub(w.Start).Nanoseconds() * 11 / 10; cpu > max {
		t.Errorf("samples stand for %d ns in a window of %d ns of one thread", cpu, w.End.Sub(w.Start).Nanoseconds())
	}
	if err := prof.CheckValid(); err != nil {
		t.Errorf("not a valid pprof profile: %v", err)
	}
}
