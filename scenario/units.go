package scenario

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as in Go ("500ms", "1m30s").
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &nodeError{line: n.Line, msg: "want a duration such as 10s or 1m30s"}
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		if n.Value == "0" {
			*d = 0
			return nil
		}
		return &nodeError{line: n.Line, msg: fmt.Sprintf("%q is not a duration (want e.g. 500ms, 10s, 2m)", n.Value)}
	}
	if v < 0 {
		return &nodeError{line: n.Line, msg: fmt.Sprintf("%q is negative", n.Value)}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes d as a duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// ByteSize is a number of bytes written plainly or with a binary or decimal
// suffix: 1048576, 512KiB, 256MiB, 2GiB, 100MB.
type ByteSize int64

var byteSuffixes = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// reDecimal is a plain decimal number: no sign, hex, NaN or infinity.
var reDecimal = regexp.MustCompile(`^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$|^\.[0-9]+([eE][-+]?[0-9]+)?$`)

// ParseByteSize parses s as a ByteSize. A number of bytes without a
// suffix (or with B) must be whole; one with a larger unit is rounded to
// the nearest byte. The result must fit in an int64.
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	num := s
	for _, bs := range byteSuffixes {
		if strings.HasSuffix(s, bs.suffix) {
			mult, num = bs.mult, strings.TrimSpace(strings.TrimSuffix(s, bs.suffix))
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !reDecimal.MatchString(num) {
		return 0, fmt.Errorf("%q is not a size (want e.g. 256MiB, 1GiB or a number of bytes)", s)
	}
	b := v * float64(mult)
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is more bytes than any machine has", s)
	}
	if mult == 1 && b != math.Trunc(b) {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	return ByteSize(math.Round(b)), nil
}

// UnmarshalYAML parses a size with an optional suffix.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &nodeError{line: n.Line, msg: "want a size such as 256MiB"}
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return &nodeError{line: n.Line, msg: err.Error()}
	}
	*b = v
	return nil
}

// nodeError is an error found while decoding one YAML node.
type nodeError struct {
	line int
	msg  string
}

func (e *nodeError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// IntList is a list of integers, written as a list ("[50, 100]") or as a
// single number ("50").
type IntList []int

// UnmarshalYAML parses a number or a list of numbers.
func (l *IntList) UnmarshalYAML(n *yaml.Node) error {
	nodes := []*yaml.Node{n}
	switch n.Kind {
	case yaml.ScalarNode:
	case yaml.SequenceNode:
		nodes = n.Content
	default:
		return &nodeError{line: n.Line, msg: "want a number or a list of numbers such as [50, 100]"}
	}
	var out IntList
	for _, c := range nodes {
		v, err := strconv.Atoi(c.Value)
		if c.Kind != yaml.ScalarNode || err != nil {
			return &nodeError{line: c.Line, msg: fmt.Sprintf("%q is not a whole number", c.Value)}
		}
		out = append(out, v)
	}
	*l = out
	return nil
}
