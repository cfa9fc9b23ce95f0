package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Read reads, defaults and validates the scenario file at path.
func Read(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes, defaults and validates a scenario read from file.
// file is used in error messages and to resolve relative directories.
func Parse(file string, data []byte) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(file, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &Error{File: file, Msg: "file is empty"}
	}
	ix := newIndex(&root)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		return nil, ix.decodeError(file, err)
	}
	s.Path = file
	s.Source = data
	v := &validator{file: file, ix: ix}
	v.scenario(&s)
	if v.err != nil {
		return nil, v.err
	}
	return &s, nil
}

// syntaxError locates a YAML syntax error.
func syntaxError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if sm := reLine.FindStringSubmatch(msg); sm != nil {
		var line int
		fmt.Sscanf(sm[1], "%d", &line)
		return &Error{File: file, Line: line, Msg: "YAML syntax: " + sm[2]}
	}
	return &Error{File: file, Msg: "YAML syntax: " + msg}
}

// dirOf returns the directory that relative paths in file are resolved from.
func dirOf(file string) string {
	d, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return filepath.Dir(file)
	}
	return d
}
