package sampling

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollperf/toll/e2e/tolltest"
)

// TestSeveralStarts runs real JVMs, every variant at once (mode:
// together), started once but twice over the run (starts: 2), and checks
// that each variant's JVM starts twice, each start before its span of
// rounds and with a variant warm-up of its own, that the trials name their
// start, and that the summary carries the start-to-start term divided
// between the two starts and says so.
func TestSeveralStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs JVMs")
	}
	path := tolltest.HelloScenario(t, `name: starts
mode: together
starts: 2
`, `load:
  target: "http://127.0.0.1:${port:hello}"
  requests: [{path: /}]
  rate: 100
  warmup: 500ms
  duration: 2s
  variant_warmup: 2s
rounds: 4
`)
	out, stdout, trials := tolltest.RunForTrials(t, path, 8) // 4 rounds × 2 variants

	warmed := map[[2]int]int{} // {launch, round} → trials that began a warm-up
	for name, b := range trials {
		var tr struct {
			Round          int     `json:"round"`
			Launch         int     `json:"launch"`
			Variant        string  `json:"variant"`
			VariantWarmupS float64 `json:"variant_warmup_s"`
		}
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		if want := (tr.Round - 1) / 2; tr.Launch != want {
			t.Errorf("%s: round %d says start %d, want %d", name, tr.Round, tr.Launch, want)
		}
		if tr.VariantWarmupS > 0 {
			warmed[[2]int{tr.Launch, tr.Round}]++
		}
	}
	// Each start warms both variants before its first round, and only then.
	if len(warmed) != 2 || warmed[[2]int{0, 1}] != 2 || warmed[[2]int{1, 3}] != 2 {
		t.Errorf("variant warm-ups began at %v, want both variants' in rounds 1 and 3 (the first of each start)", warmed)
	}
	logs, err := filepath.Glob(filepath.Join(out, "logs", "*hello*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"baseline", "serial"} {
		n := 0
		for _, l := range logs {
			if strings.Contains(filepath.Base(l), v) {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%s's hello left %d logs of %v, want one per start (2)", v, n, logs)
		}
	}

	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Manifest struct {
			Starts int `json:"starts"`
		} `json:"manifest"`
		StartNoisePct map[string]float64 `json:"start_noise_pct"`
		Warnings      []struct {
			Text string `json:"text"`
		} `json:"warnings"`
		Steps []struct {
			Variants []struct {
				Name  string `json:"name"`
				Costs []struct {
					Cost  string `json:"cost"`
					Delta *struct {
						FixedPct float64 `json:"fixed_pct"`
					} `json:"delta"`
				} `json:"costs"`
			} `json:"variants"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Manifest.Starts != 2 || sum.StartNoisePct["cpu_per_request_ms"] == 0 {
		t.Fatalf("manifest starts %d, start_noise_pct %v; want 2 and CPU per request's term", sum.Manifest.Starts, sum.StartNoisePct)
	}
	found := false
	for _, v := range sum.Steps[0].Variants {
		for _, c := range v.Costs {
			if v.Name != "serial" || c.Cost != "cpu_per_request_ms" || c.Delta == nil {
				continue
			}
			found = true
			// Both sides' term for each of two starts, with the run's own:
			// at least that, more only when the two starts differed.
			term := math.Log1p(sum.StartNoisePct["cpu_per_request_ms"] / 100)
			least := 100 * math.Expm1(math.Sqrt(2*term*term/2))
			if c.Delta.FixedPct < least || c.Delta.FixedPct > 4*least {
				t.Errorf("serial's CPU per request carries %.2f%% fixed, want at least the term over two starts (%.2f%%)", c.Delta.FixedPct, least)
			}
		}
	}
	if !found {
		t.Errorf("no CPU per request change for serial in the summary")
	}
	said := false
	for _, w := range sum.Warnings {
		said = said || strings.Contains(w.Text, "JVMs started 2 times")
	}
	if !said {
		t.Errorf("warnings %q, want the JVMs' two starts said", sum.Warnings)
	}
	if !strings.Contains(stdout, "restart once (2 starts)") {
		t.Errorf("report's first line does not say the two starts:\n%s", stdout)
	}
}
