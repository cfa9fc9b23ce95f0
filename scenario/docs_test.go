package scenario

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// acceptedFields returns the dotted path of every field the parser accepts
// in a value of type t under prefix, following its yaml tags into nested
// structs, through slices and maps (whose elements take no name of their
// own in the path: "variants.services.args"). A type that parses its own
// scalars (yaml.Unmarshaler) is a leaf.
func acceptedFields(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if reflect.PointerTo(t).Implements(unmarshalerType) {
			return nil
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		path := tag
		if prefix != "" {
			path = prefix + "." + tag
		}
		out = append(out, path)
		out = append(out, acceptedFields(f.Type, path)...)
	}
	return out
}

// documentedFields returns the field paths in the first column of the
// tables of the Markdown document md: a cell holding one code span.
func documentedFields(md string) []string {
	cell := regexp.MustCompile("^\\|\\s*`([a-z0-9_.]+)`\\s*\\|")
	var out []string
	for _, line := range strings.Split(md, "\n") {
		if m := cell.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestScenarioFieldsDocumented: docs/scenario.md has a table row for every
// field the scenario parser accepts, and none for a field it refuses.
func TestScenarioFieldsDocumented(t *testing.T) {
	md, err := os.ReadFile("../docs/scenario.md")
	if err != nil {
		t.Fatal(err)
	}
	accepted := acceptedFields(reflect.TypeFor[Scenario](), "")
	documented := documentedFields(string(md))
	if len(accepted) < 100 {
		t.Fatalf("found %d accepted fields, want the scenario's whole tree", len(accepted))
	}
	for _, f := range accepted {
		if !slices.Contains(documented, f) {
			t.Errorf("docs/scenario.md documents no field %s, which the parser accepts", f)
		}
	}
	for _, f := range documented {
		if !slices.Contains(accepted, f) {
			t.Errorf("docs/scenario.md documents a field %s, which the parser does not accept", f)
		}
	}
}

// TestAcceptedFieldsFollowsNesting: the walk reaches fields behind
// pointers, slices and maps, and stops at types that parse their own
// scalars.
func TestAcceptedFieldsFollowsNesting(t *testing.T) {
	got := acceptedFields(reflect.TypeFor[Scenario](), "")
	for _, want := range []string{"name", "services.ready.http", "variants.services.args", "load.variant_warmup_until.jit_below", "kubernetes.tolerations.effect", "job.log_metrics.regex", "load.requests.weight"} {
		if !slices.Contains(got, want) {
			t.Errorf("accepted fields lack %s", want)
		}
	}
	for _, f := range got {
		if strings.HasPrefix(f, "load.duration.") || strings.HasPrefix(f, "load.users.") {
			t.Errorf("walked into a type that parses its own scalars: %s", f)
		}
	}
}

// TestREADMEScenarioReads: the minimal scenario the README offers to adapt
// reads as it is written, and is short enough to be read at a glance.
func TestREADMEScenarioReads(t *testing.T) {
	md, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(md), "\n```yaml\n")
	if !ok {
		t.Fatal("README.md has no yaml block")
	}
	block, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("README.md's yaml block is not closed")
	}
	if n := strings.Count(block, "\n") + 1; n > 25 {
		t.Errorf("README.md's minimal scenario is %d lines, want a short one", n)
	}
	s, err := Parse("README.md", []byte(block+"\n"))
	if err != nil {
		t.Fatalf("README.md's minimal scenario: %v", err)
	}
	if len(s.Variants) < 2 || s.Load.Duration == 0 {
		t.Errorf("README.md's minimal scenario has %d variants and duration %v, want a baseline, a variant and a window", len(s.Variants), s.Load.Duration)
	}
}

// TestReproductionsTableNamesScenarios reads the first table of
// docs/reproductions.md (benchmark, scenario, layout, agent, short
// version): each row names a scenario file of examples/reproductions, a
// report layout and the flags of a short version, and every reproduction
// has a row. An edit once merged the results table's cells into two of
// its rows.
func TestReproductionsTableNamesScenarios(t *testing.T) {
	md, err := os.ReadFile("../docs/reproductions.md")
	if err != nil {
		t.Fatal(err)
	}
	const header = "| benchmark | scenario | layout | agent here (in place of) | short version (CI) |"
	_, table, ok := strings.Cut(string(md), header+"\n|---|---|---|---|---|\n")
	if !ok {
		t.Fatalf("docs/reproductions.md has no table headed %s", header)
	}
	row := regexp.MustCompile("^\\| [^|]+ \\| `([a-z0-9-]+\\.yaml)` \\| `([a-z0-9-]+)` \\| [^|]+ \\| `(--rounds [^`]+)` \\|$")
	files, err := os.ReadDir("../examples/reproductions")
	if err != nil {
		t.Fatal(err)
	}
	missing := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".yaml") {
			missing[f.Name()] = true
		}
	}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("row is not benchmark | `scenario.yaml` | `layout` | agent | `short version`:\n%s", line)
			continue
		}
		if !missing[m[1]] {
			t.Errorf("%s: no such scenario in examples/reproductions, or named twice", m[1])
		}
		delete(missing, m[1])
		if !slices.Contains(ReportLayouts(), m[2]) {
			t.Errorf("%s: %q is not a report layout", m[1], m[2])
		}
	}
	for f := range missing {
		t.Errorf("%s has no row", f)
	}
}
