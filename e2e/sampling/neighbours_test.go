package sampling

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestIdleNeighbours runs a variant whose consumer burns CPU in the
// background, loaded or not (an agent's exporter or profiler on its
// timers), beside the baseline with restart: once: every baseline trial
// must record that variant's idle CPU as its neighbour's, the variant's own
// trials the baseline's (next to nothing), and the report must warn that
// the two sides' background falls unevenly. With restart: per-trial no
// variant runs beside another, and nothing is recorded.
func TestIdleNeighbours(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real services")
	}
	const background = 0.1 // cores: --background-cpu 100ms per second
	for _, restart := range []string{"once", "per-trial"} {
		t.Run(restart, func(t *testing.T) {
			path := tolltest.WriteScenario(t, "neighbours", `  - name: baseline
  - name: busy
    services:
      consumer: {args: [--background-cpu, 100ms]}`, `  rate: 50
  warmup: 500ms
  duration: 2s
rounds: 2
restart: `+restart)
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := tolltest.Run(t, "run", path, "--out", out)
			if code == 3 {
				t.Skipf("the machine was too busy for a valid run (exit 3):\n%s", stdout)
			}
			if code != 0 {
				t.Fatalf("toll run: exit %d\n%s%s", code, stdout, stderr)
			}
			// The reading spans the trial's load and what toll does
			// around it, which a busy machine stretches.
			most := tolltest.Patience(t, 5*time.Second).Seconds()
			files, _ := filepath.Glob(filepath.Join(out, "trials", "*.json"))
			if len(files) != 4 {
				t.Fatalf("%d trial files, want 4", len(files))
			}
			for _, f := range files {
				var tr struct {
					Variant    string
					Neighbours []struct {
						Variant string
						CPUS    float64 `json:"cpu_s"`
						S       float64
					}
				}
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &tr); err != nil {
					t.Fatal(err)
				}
				if restart == "per-trial" {
					if len(tr.Neighbours) > 0 {
						t.Errorf("%s: neighbours %+v with restart: per-trial", filepath.Base(f), tr.Neighbours)
					}
					continue
				}
				if len(tr.Neighbours) != 1 {
					t.Errorf("%s (%s): neighbours %+v, want the other variant", filepath.Base(f), tr.Variant, tr.Neighbours)
					continue
				}
				n := tr.Neighbours[0]
				if n.S < 2.5 || n.S > most {
					t.Errorf("%s: neighbours read over %.2f s, want the trial's load (0.5 s + 2 s) and at most %.1f s", filepath.Base(f), n.S, most)
					continue
				}
				cores := n.CPUS / n.S
				switch tr.Variant {
				case "baseline":
					if n.Variant != "busy" || cores < background/2 || cores > 3*background {
						t.Errorf("baseline's window: neighbour %s used %.3f cores, want busy at about %.1f", n.Variant, cores, background)
					}
				case "busy":
					if n.Variant != "baseline" || cores > background/2 {
						t.Errorf("busy's window: neighbour %s used %.3f cores, want baseline idle (next to nothing)", n.Variant, cores)
					}
				}
			}
			var s struct{ Warnings []struct{ Text string } }
			b, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			warned := false
			for _, w := range s.Warnings {
				warned = warned || strings.Contains(w.Text, "the idle services of busy used")
			}
			if warned != (restart == "once") {
				t.Errorf("restart %s: warned of uneven neighbours %v; warnings %q", restart, warned, s.Warnings)
			}
		})
	}
}
