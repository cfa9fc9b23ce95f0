package scenario

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// Overrides replace some of a scenario file's settings before it is
// validated: the short version of a long scenario (`toll run --rounds 2
// --duration 3s --warmup 1s`), for a CI job or a first look. A nil field
// keeps the file's setting.
type Overrides struct {
	Rounds   *int
	Warmup   *time.Duration
	Duration *time.Duration
}

// Empty reports whether o overrides nothing.
func (o Overrides) Empty() bool { return o.Rounds == nil && o.Warmup == nil && o.Duration == nil }

// ReadWith reads the scenario file at path as Read does, with o's settings
// in place of the file's. The overridden values are validated as if they
// were written in the file (the same bounds and messages), and the
// scenario's Source, which the results directory keeps, holds them, so a
// resumed run keeps them too.
func ReadWith(path string, o Overrides) (*Scenario, error) {
	s, err := Read(path)
	if err != nil || o.Empty() {
		return s, err
	}
	data, err := o.apply(s.Source)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Parse(path, data)
}

// apply writes o's settings into the YAML document data.
func (o Overrides) apply(data []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the scenario is not a mapping")
	}
	top := root.Content[0]
	if o.Rounds != nil {
		setScalar(top, "rounds", strconv.Itoa(*o.Rounds))
	}
	if o.Warmup != nil || o.Duration != nil {
		load := child(top, "load")
		if load == nil || load.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("--warmup and --duration set load.warmup and load.duration, and the scenario has no load")
		}
		if o.Warmup != nil {
			setScalar(load, "warmup", o.Warmup.String())
		}
		if o.Duration != nil {
			setScalar(load, "duration", o.Duration.String())
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// child returns the value of key in mapping m, or nil.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setScalar sets key in mapping m to the plain scalar value, adding the key
// when m lacks it.
func setScalar(m *yaml.Node, key, value string) {
	tag := "!!str"
	if _, err := strconv.Atoi(value); err == nil {
		tag = "!!int"
	}
	if v := child(m, key); v != nil {
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value, Line: v.Line, Column: v.Column}
		return
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value})
}
