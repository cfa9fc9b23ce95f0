package report

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dashboardPath is the Grafana dashboard for the series toll writes.
const dashboardPath = "../examples/grafana/toll.json"

// dashboardQueries returns every PromQL query of the dashboard (panels'
// expr, template variables' query) with Grafana's variables filled in for
// the scenario and cost given.
func dashboardQueries(t *testing.T, scenario, cost string) []string {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	var out []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(k, e)
			}
		case []any:
			for _, e := range x {
				walk(key, e)
			}
		case string:
			if key == "expr" || (key == "query" && strings.Contains(x, "toll_")) {
				out = append(out, strings.NewReplacer("$scenario", scenario, "$cost", cost).Replace(x))
			}
		}
	}
	walk("", doc)
	if len(out) == 0 {
		t.Fatalf("%s has no queries", dashboardPath)
	}
	return out
}

// labelValuesQuery matches Grafana's label_values(METRIC, LABEL).
var labelValuesQuery = regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// TestDashboardNamesTollSeries checks that every query of the Grafana
// dashboard names only metric families toll writes (FamilyNames) and only
// labels toll puts on them.
func TestDashboardNamesTollSeries(t *testing.T) {
	families := FamilyNames()
	labels := []string{"scenario", "run", "variant", "target_rate", "target_users", "cost", "percentile", "request", "cpu",
		"version", "seed", "baseline", "job", "instance", "__name__"}
	metricRe := regexp.MustCompile(`\b[a-zA-Z_:][a-zA-Z0-9_:]*\b`)
	matcherRe := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"`)
	groupRe := regexp.MustCompile(`\b(?:by|on|without|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	promql := []string{"max", "min", "sum", "avg", "by", "on", "and", "or", "unless", "scalar", "without", "ignoring",
		"group_left", "group_right", "topk", "bottomk", "last_over_time", "s", "d", "m", "h"}
	for _, q := range dashboardQueries(t, "s", "cpu_per_request_ms") {
		if m := labelValuesQuery.FindStringSubmatch(q); m != nil {
			q = m[1]
			if !slices.Contains(labels, m[2]) {
				t.Errorf("%q: label_values of %q, a label toll does not write", q, m[2])
			}
		}
		// Leave out label matchers' values and numbers before looking for names.
		bare := regexp.MustCompile(`"[^"]*"|\b\d+(\.\d+)?\b|\[[^\]]*\]`).ReplaceAllString(q, `""`)
		named := 0
		for _, name := range metricRe.FindAllString(bare, -1) {
			switch {
			case slices.Contains(families, name):
				named++
			case slices.Contains(promql, name) || slices.Contains(labels, name):
			default:
				t.Errorf("%q names %q, which toll does not write", q, name)
			}
		}
		if named == 0 {
			t.Errorf("%q names no series of toll's", q)
		}
		for _, m := range matcherRe.FindAllStringSubmatch(q, -1) {
			if !slices.Contains(labels, m[1]) {
				t.Errorf("%q matches label %q, which toll does not write", q, m[1])
			}
		}
		for _, m := range groupRe.FindAllStringSubmatch(q, -1) {
			for _, l := range strings.Split(m[1], ",") {
				if l = strings.TrimSpace(l); l != "" && !slices.Contains(labels, l) {
					t.Errorf("%q groups by label %q, which toll does not write", q, l)
				}
			}
		}
	}
}
