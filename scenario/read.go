package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"
)

// Read reads, defaults and validates the scenario file at path. What is
// not a regular file (a FIFO, a device, a directory) is refused before it
// is read, and a file larger than MaxFileSize before it is read whole.
func Read(path string) (*Scenario, error) {
	data, err := readSource(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// readSource returns the content of the scenario file at path, refusing
// what is not a regular file and what is larger than MaxFileSize.
func readSource(path string) ([]byte, error) {
	// Stat first: opening a FIFO for reading waits for a writer, and
	// opening a device may act on it.
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	// O_NONBLOCK, then the open file's own mode: the path may have been
	// replaced by a FIFO since it was looked at.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	if st.Size() > MaxFileSize {
		return nil, tooBig(path, st.Size())
	}
	// Read through the cap all the same: the file may grow as it is read.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, tooBig(path, int64(len(data)))
	}
	return data, nil
}

// notRegular is the error for a scenario path that is not a regular file.
func notRegular(file string, mode os.FileMode) error {
	what := "a special file"
	switch {
	case mode.IsDir():
		what = "a directory"
	case mode&os.ModeNamedPipe != 0:
		what = "a FIFO (named pipe)"
	case mode&os.ModeSocket != 0:
		what = "a socket"
	case mode&os.ModeDevice != 0:
		what = "a device"
	}
	return &Error{File: file, Msg: fmt.Sprintf("%s, not a regular file: toll reads a scenario only from a regular file (reading a FIFO waits for a writer, a device may never end); write it to a file first", what)}
}

// ReadStartup reads the scenario file at path as a start-up experiment
// (`toll run --startup`): a load test's services and variants, each started
// from cold startup.repetitions times (default 10), its load, rounds and
// restart policy set aside.
func ReadStartup(path string) (*Scenario, error) {
	s, err := Read(path)
	if err != nil || s.Startup != nil {
		return s, err
	}
	return parseWith(path, s.Source, thisMachine(), parseOptions{startup: true})
}

// Parse decodes, defaults and validates a scenario read from file, against
// the machine toll runs on (its CPUs, memory and file descriptor limit).
// file is used in error messages and to resolve relative directories.
func Parse(file string, data []byte) (*Scenario, error) {
	return parse(file, data, thisMachine())
}

// parse is Parse against the machine m.
func parse(file string, data []byte, m machine) (*Scenario, error) {
	return parseWith(file, data, m, parseOptions{})
}

// parseOptions are how parseWith reads a scenario beyond its file.
type parseOptions struct {
	// startup makes the scenario a start-up experiment whatever its
	// workload (toll run --startup).
	startup bool
	// modeOverridden says the scenario's mode is about to be replaced
	// (toll run --sequential): its CPUs are checked against the machine
	// once it has been.
	modeOverridden bool
}

// parseWith is parse, read as opts say.
func parseWith(file string, data []byte, m machine, opts parseOptions) (*Scenario, error) {
	asStartup := opts.startup
	if len(data) > MaxFileSize {
		return nil, tooBig(file, int64(len(data)))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(file, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &Error{File: file, Msg: "file is empty"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	err := dec.Decode(&s)
	// The index follows aliases, so it is built once the decoder has
	// refused a document that aliases excessively (a "billion laughs").
	if err != nil && strings.Contains(err.Error(), "excessive aliasing") {
		return nil, &Error{File: file, Msg: "YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	ix := newIndex(&root)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, ix.decodeError(file, err)
	}
	if line, marker, more := secondDocument(data); more {
		return nil, &Error{File: file, Line: line, Msg: fmt.Sprintf("a second YAML document: a scenario is one document; remove the %s and what follows it, or put it in a file of its own", marker)}
	}
	if e := checkNumbers(file, root.Content[0], reflect.TypeFor[Scenario](), ""); e != nil {
		return nil, e
	}
	s.Path = file
	s.Source = data
	v := &validator{file: file, ix: ix, m: m, asStartup: asStartup, modeOverridden: opts.modeOverridden}
	if asStartup && s.Startup == nil {
		s.Startup = &Startup{}
		s.Job = nil
	}
	v.scenario(&s)
	if v.err != nil {
		return nil, v.err
	}
	return &s, nil
}

// secondDocument reports whether data holds a YAML document after its
// first, the line where it starts and the marker that ended the first
// ("---", or "..." when the first ended with a document end marker). The
// decoder reads only the first, so toll would otherwise ignore the rest
// without a word.
func secondDocument(data []byte) (line int, marker string, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first, second yaml.Node
	if dec.Decode(&first) != nil {
		return 0, "", false
	}
	switch err := dec.Decode(&second); {
	case err == nil:
		return second.Line, "---", true
	case errors.Is(err, io.EOF):
		return 0, "", false
	}
	// The decoder refuses a document that follows a "..." without a
	// "---" of its own, and the first document is all it reads: what
	// follows the end marker would be ignored.
	if line := afterEndMarker(data); line > 0 {
		return line, "...", true
	}
	return 0, "", false
}

// afterEndMarker returns the line of the first content (not blank, not a
// comment) after data's first document end marker ("..." at the start of
// a line), or 0 where there is none.
func afterEndMarker(data []byte) int {
	ended := false
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		switch {
		case !ended:
			ended = l == "..." || strings.HasPrefix(l, "... ") || strings.HasPrefix(l, "...\t")
		case strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#"):
			return i + 1
		}
	}
	return 0
}

// tooBig is the error for a scenario file of size bytes, above MaxFileSize.
func tooBig(file string, size int64) error {
	over := fmt.Sprintf("is %d bytes", size)
	if size == MaxFileSize+1 {
		over = "is larger" // read through a LimitReader: the size is unknown
	}
	return &Error{File: file, Msg: fmt.Sprintf("the file %s, above toll's limit of %d MiB for a scenario: a scenario is a few KiB of YAML, and reading one takes up to about 160 times its size in memory", over, MaxFileSize>>20)}
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
