package analyze

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// jitBusy is the JIT compile time, in ms per second of the window (2% of a
// core), above which a JVM under steady load is taken to be still warming
// up: once its hot code is compiled a JVM compiles next to nothing, while
// in the minutes after its start it compiles for hundreds of ms a second.
const jitBusy = 20

// jitWarning says which of a variant's measured JVMs were still compiling
// in which rounds of a load step, or is empty. Their CPU and latency there
// include the JIT's own work and code not yet compiled: the comparison
// measures a moving target (issue #18: the baseline's CPU per request fell
// from 2.0 to 0.7 ms over 20 rounds while the JIT compiled).
func jitWarning(variant, step string, rounds map[int]*TrialCosts) string {
	busy := map[string][]int{}
	peak := map[string]float64{}
	for r, tc := range rounds {
		for svc, costs := range tc.Services {
			if ms, ok := costs[JITTime]; ok && ms > jitBusy {
				busy[svc] = append(busy[svc], r)
				peak[svc] = max(peak[svc], ms)
			}
		}
	}
	if len(busy) == 0 {
		return ""
	}
	var parts []string
	for _, svc := range slices.Sorted(maps.Keys(busy)) {
		rs := busy[svc]
		sort.Ints(rs)
		parts = append(parts, fmt.Sprintf("%s in %s (up to %.0f ms/s)", svc, roundList(rs), peak[svc]))
	}
	return fmt.Sprintf("%s's JVM was still JIT-compiling under load at %s: %s; its costs there include warm-up, so warm up longer (load.variant_warmup) or restart less often",
		variant, step, strings.Join(parts, ", "))
}

// roundList writes rounds as "round 3" or "rounds 1, 2, 5".
func roundList(rs []int) string {
	if len(rs) == 1 {
		return fmt.Sprintf("round %d", rs[0])
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	return "rounds " + strings.Join(s, ", ")
}
