package scenario

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a problem in a scenario file, located by file, line and field.
type Error struct {
	File  string
	Line  int    // 0 when unknown
	Field string // dotted path such as services[1].command; may be empty
	Msg   string
}

// Error formats the problem as "file:line: field: msg", on one line: line
// breaks from the file (in a key, or a value the YAML decoder quotes) are
// escaped.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return strings.ReplaceAll(strings.ReplaceAll(b.String(), "\r", `\r`), "\n", `\n`)
}

// entry is one key (or sequence item) of the YAML document, with its place.
type entry struct {
	path  string
	key   string
	line  int
	value string // scalar value, if any
}

// maxAliasedEntries bounds the index: past it, aliases are no longer
// followed. A scenario has a few hundred fields.
const maxAliasedEntries = 100_000

// index maps the YAML document's fields to their lines.
type index struct {
	entries []entry
	byPath  map[string]int
}

func newIndex(root *yaml.Node) *index {
	ix := &index{byPath: map[string]int{}}
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	ix.walk(root, "")
	return ix
}

func (ix *index) add(e entry) {
	ix.entries = append(ix.entries, e)
	if _, ok := ix.byPath[e.path]; !ok {
		ix.byPath[e.path] = e.line
	}
}

// walk indexes the node n at path. It follows aliases and merge keys
// ("<<: *defaults"), so that a field set through them is known to be set;
// their fields are found at the anchor's lines. The decoder has already
// refused a document that aliases excessively.
func (ix *index) walk(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.AliasNode:
		// Aliases of aliases multiply: a few lines can stand for 10⁹
		// nodes, which the decoder refuses, but only once it reaches them.
		if n.Alias != nil && len(ix.entries) < maxAliasedEntries {
			ix.walk(n.Alias, path)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				if v.Kind == yaml.SequenceNode {
					for _, c := range v.Content {
						ix.walk(c, path)
					}
				} else {
					ix.walk(v, path)
				}
				continue
			}
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			ix.add(entry{path: p, key: k.Value, line: k.Line, value: v.Value})
			if v.Line != k.Line {
				ix.add(entry{path: p, key: k.Value, line: v.Line, value: v.Value})
			}
			ix.walk(v, p)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			ix.add(entry{path: p, line: c.Line, value: c.Value})
			ix.walk(c, p)
		}
	}
}

// line returns the line of path, or of its nearest ancestor that has one.
func (ix *index) line(path string) int {
	for path != "" {
		if l, ok := ix.byPath[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// at returns the path of the field on line that best matches key or value.
func (ix *index) at(line int, key, value string) string {
	best := ""
	for _, e := range ix.entries {
		if e.line != line {
			continue
		}
		if (key != "" && e.key == key) || (value != "" && e.value == value) {
			return e.path
		}
		if best == "" {
			best = e.path // the outermost field on the line
		}
	}
	return best
}

var (
	reLine       = regexp.MustCompile(`(?s)^line (\d+): (.*)$`)
	reUnknown    = regexp.MustCompile("^field (\\S+) not found in type scenario\\.(\\w+)$")
	reCannot     = regexp.MustCompile("(?s)^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
	reCannotKind = regexp.MustCompile(`^cannot unmarshal !!(\w+) into (\S+)$`)
)

// decodeError turns an error from yaml.v3 into an *Error naming the field.
func (ix *index) decodeError(file string, err error) error {
	var msgs []string
	switch e := err.(type) {
	case *yaml.TypeError:
		msgs = e.Errors
	case *nodeError:
		return &Error{File: file, Line: e.line, Field: ix.at(e.line, "", ""), Msg: e.msg}
	default:
		msgs = []string{err.Error()}
	}
	// Report the first problem; the user fixes one line at a time.
	m := strings.TrimPrefix(msgs[0], "yaml: ")
	sm := reLine.FindStringSubmatch(m)
	if sm == nil {
		return &Error{File: file, Msg: m}
	}
	line, _ := strconv.Atoi(sm[1])
	msg := sm[2]
	out := &Error{File: file, Line: line, Msg: msg}
	if u := reUnknown.FindStringSubmatch(msg); u != nil {
		out.Field = ix.at(line, u[1], "")
		out.Msg = fmt.Sprintf("unknown field %q in %s", u[1], strings.ToLower(u[2]))
		if s := Suggest(u[1], knownFields(u[2])); s != "" {
			out.Msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
	} else if c := reCannot.FindStringSubmatch(msg); c != nil {
		out.Field = ix.at(line, "", c[2])
		out.Msg = fmt.Sprintf("%q is not %s", clip(c[2]), kindName(c[3]))
	} else if c := reCannotKind.FindStringSubmatch(msg); c != nil {
		out.Field = ix.at(line, "", "")
		out.Msg = fmt.Sprintf("a %s is not %s", yamlKind(c[1]), kindName(c[2]))
	} else {
		out.Field = ix.at(line, "", "")
	}
	return out
}

// clip shortens a value quoted in an error.
func clip(v string) string {
	if len(v) > 60 {
		return v[:60] + "…"
	}
	return v
}

func yamlKind(tag string) string {
	switch tag {
	case "map":
		return "mapping"
	case "seq":
		return "list"
	case "str":
		return "string"
	}
	return tag
}

func kindName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "float"), strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		if strings.HasPrefix(goType, "float") {
			return "a number"
		}
		return "a whole number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a mapping"
	}
	return "a " + strings.ToLower(strings.TrimPrefix(goType, "scenario."))
}

// DidYouMean returns what an error about the unknown name s adds: the
// closest of the known names, ` (did you mean "x"?)`, when one is within
// a few edits of s; otherwise the known names, ` (known: a, b)`, or ""
// when there are none.
func DidYouMean(s string, known []string) string {
	if k := Suggest(s, known); k != "" {
		return fmt.Sprintf(" (did you mean %q?)", k)
	}
	if len(known) == 0 {
		return ""
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

// Suggest returns the known name closest to s, if one is within a few
// edits of it (two, or three for a name longer than six), else "". Of
// names equally close, the first known wins.
func Suggest(s string, known []string) string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, k := range known {
		if d := editDistance(strings.ToLower(s), strings.ToLower(k)); d <= 2 || (d <= 3 && len(s) > 6) {
			cs = append(cs, cand{k, d})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	return cs[0].name
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
