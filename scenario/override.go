package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	// Restart replaces the restart policy: a short version of a scenario
	// that restarts its services every round may start them once.
	Restart *string
	// Starts replaces how many times services started once start over the
	// run (starts).
	Starts *int
	// Sequential runs a duet scenario in the default schedule instead, one
	// variant under load at a time (mode, pinning.duet and load.slice
	// left out): the check of a duet's result against the schedule without
	// its shortcuts.
	Sequential bool
	// Precision and Budget run the scenario in precision mode with this
	// target (percent) and budget, in place of the file's rounds or
	// precision settings.
	Precision *float64
	Budget    *time.Duration
	// Rates replace the load's rate or rates with these open-model steps
	// (toll run --curve: the steps of a cost curve).
	Rates []float64
	// Vars fill in the file's placeholders of the user's own (`toll run
	// --set version=2.10.0` for each ${version}) before it is read: one
	// scenario for every version of an agent.
	Vars map[string]string
}

// Empty reports whether o overrides nothing.
func (o Overrides) Empty() bool {
	return o.Rounds == nil && o.Warmup == nil && o.Duration == nil && o.Restart == nil && o.Starts == nil && !o.Sequential && o.Precision == nil && o.Budget == nil && len(o.Vars) == 0 && len(o.Rates) == 0
}

// reservedVars are the placeholders toll fills in itself.
var reservedVars = []string{"sink", "sink_addr", "toll", "variant", "listen"}

// reVarName is a user's placeholder's name, and reVarValue what its value
// may hold: the characters of versions, paths, image references and
// URLs, and nothing that changes what the YAML around it means.
var (
	reVarName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	reVarValue = regexp.MustCompile(`^[A-Za-z0-9._/@+=,~:%-]*$`)
)

// fill replaces each ${NAME} of vars in data with its value, refusing a
// name toll fills in itself, a value that could change the YAML's
// meaning, and a name the file does not use.
func fill(data []byte, vars map[string]string) ([]byte, error) {
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		val := vars[name]
		switch {
		case !reVarName.MatchString(name):
			return nil, fmt.Errorf("--set %s: a name is letters, digits and _, starting with a letter", name)
		case slices.Contains(reservedVars, name) || strings.HasPrefix(name, "port"):
			return nil, fmt.Errorf("--set %s: ${%s} is toll's own placeholder", name, name)
		case !reVarValue.MatchString(val) || strings.Contains(val, ": "):
			return nil, fmt.Errorf("--set %s=%q: a value holds letters, digits and . _ / @ + = , ~ : %% - (a version, a path, an image, a URL), no spaces or quotes", name, val)
		}
		ph := []byte("${" + name + "}")
		if !bytes.Contains(data, ph) {
			return nil, fmt.Errorf("--set %s: the scenario has no ${%s} to fill in", name, name)
		}
		data = bytes.ReplaceAll(data, ph, []byte(val))
	}
	return data, nil
}

// ReadWith reads the scenario file at path as Read does, with o's settings
// in place of the file's. The overridden values are validated as if they
// were written in the file (the same bounds and messages), and the
// scenario's Source, which the results directory keeps, holds them, so a
// resumed run keeps them too.
func ReadWith(path string, o Overrides) (*Scenario, error) {
	data, err := readSource(path)
	if err != nil {
		return nil, err
	}
	if data, err = fill(data, o.Vars); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// A duet read as a sequential run is checked against this machine's
	// CPUs as the sequential run it becomes, below.
	s, err := parseWith(path, data, thisMachine(), parseOptions{modeOverridden: o.Sequential})
	if err != nil || o.Empty() {
		return s, err
	}
	// The overrides' own bounds, named by their flags; what they break in
	// the rest of the file (a trim longer than the window) is found when
	// the file is parsed again.
	if o.Rounds != nil && (*o.Rounds < 1 || *o.Rounds > MaxRounds) {
		return nil, fmt.Errorf("--rounds %d: must be between 1 and %d", *o.Rounds, MaxRounds)
	}
	if o.Restart != nil && !slices.Contains([]string{RestartOnce, RestartPerRound, RestartPerTrial}, *o.Restart) {
		return nil, fmt.Errorf("--restart %q is not one of once, per-round, per-trial", *o.Restart)
	}
	if o.Starts != nil && (*o.Starts < 1 || *o.Starts > MaxRounds) {
		return nil, fmt.Errorf("--starts %d: must be between 1 and %d", *o.Starts, MaxRounds)
	}
	if o.Rounds != nil && (o.Precision != nil || o.Budget != nil) {
		return nil, errors.New("--rounds fixes the rounds; --precision and --budget stop on the intervals' width: give one or the other")
	}
	for _, d := range []struct {
		flag, field string
		d           *time.Duration
	}{{"--warmup", "load.warmup", o.Warmup}, {"--duration", "load.duration", o.Duration}} {
		if d.d == nil {
			continue
		}
		if d.field == "load.duration" && *d.d <= 0 {
			return nil, fmt.Errorf("--duration %s: the measured window must be positive", *d.d)
		}
		if err := CheckDuration(d.field, *d.d); err != nil {
			return nil, fmt.Errorf("%s %s: %w", d.flag, *d.d, err)
		}
	}
	data, err = o.apply(s.Source)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, err = Parse(path, data)
	return s, o.byFlag(err)
}

// byFlag names the flag, in place of a line of the rewritten document,
// when err is about a field an override set: the user wrote the flag, and
// the line may not be in their file.
func (o Overrides) byFlag(err error) error {
	var se *Error
	if !errors.As(err, &se) {
		return err
	}
	flags := map[string]string{}
	if o.Rounds != nil {
		flags["rounds"] = fmt.Sprintf("--rounds %d", *o.Rounds)
	}
	if o.Restart != nil {
		flags["restart"] = "--restart " + *o.Restart
	}
	if o.Starts != nil {
		flags["starts"] = fmt.Sprintf("--starts %d", *o.Starts)
	}
	if o.Warmup != nil {
		flags["load.warmup"] = "--warmup " + o.Warmup.String()
	}
	if o.Duration != nil {
		flags["load.duration"] = "--duration " + o.Duration.String()
	}
	if o.Precision != nil {
		flags["precision.target"] = fmt.Sprintf("--precision %g%%", *o.Precision)
	}
	if o.Budget != nil {
		flags["precision.budget"] = "--budget " + o.Budget.String()
	}
	if f, ok := flags[se.Field]; ok {
		return fmt.Errorf("%s: %s: %s", se.File, f, se.Msg)
	}
	return err
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
	if patched, ok := o.patch(data, top); ok {
		return patched, nil
	}
	if o.Sequential {
		setScalar(top, "mode", ModeSequential)
		if p := child(top, "pinning"); p != nil && p.Kind == yaml.MappingNode {
			remove(p, "duet")
		}
		if l := child(top, "load"); l != nil && l.Kind == yaml.MappingNode {
			remove(l, "slice")
		}
	}
	if o.Rounds != nil {
		// A fixed number of rounds replaces the file's precision.
		remove(top, "precision")
		setScalar(top, "rounds", strconv.Itoa(*o.Rounds))
	}
	if o.Precision != nil || o.Budget != nil {
		// Precision mode replaces the file's fixed rounds.
		remove(top, "rounds")
		p := child(top, "precision")
		if p == nil || p.Kind != yaml.MappingNode {
			remove(top, "precision")
			p = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "precision"}, p)
		}
		if o.Precision != nil {
			setScalar(p, "target", fmt.Sprintf("%g%%", *o.Precision))
		}
		if o.Budget != nil {
			setScalar(p, "budget", o.Budget.String())
		}
	}
	if o.Restart != nil {
		setScalar(top, "restart", *o.Restart)
	}
	if o.Starts != nil {
		setScalar(top, "starts", strconv.Itoa(*o.Starts))
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
	if len(o.Rates) > 0 {
		load := child(top, "load")
		if load == nil || load.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("--curve sets load.rates, and the scenario has no load")
		}
		if child(load, "users") != nil {
			return nil, fmt.Errorf("--curve steps the open model's rate, and the scenario's load has users (the closed model)")
		}
		remove(load, "rate")
		remove(load, "rates")
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, r := range o.Rates {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(r, 'f', -1, 64)})
		}
		load.Content = append(load.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "rates"}, seq)
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

// remove deletes key from mapping m, if it is there.
func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
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

// patch writes o's settings over the file's own plain values of them, in
// place, so that every line keeps its number (an error about another field
// names the line the user sees). It fails when a setting is absent from
// the file or not a plain scalar on its line; apply then writes the
// document anew.
func (o Overrides) patch(data []byte, top *yaml.Node) ([]byte, bool) {
	type edit struct {
		node  *yaml.Node
		value string
	}
	if o.Sequential || o.Precision != nil || o.Budget != nil || len(o.Rates) > 0 || (o.Rounds != nil && child(top, "precision") != nil) {
		return nil, false // keys to remove or add: the document is written anew
	}
	var edits []edit
	if o.Rounds != nil {
		edits = append(edits, edit{child(top, "rounds"), strconv.Itoa(*o.Rounds)})
	}
	if o.Restart != nil {
		edits = append(edits, edit{child(top, "restart"), *o.Restart})
	}
	if o.Starts != nil {
		edits = append(edits, edit{child(top, "starts"), strconv.Itoa(*o.Starts)})
	}
	load := child(top, "load")
	if o.Warmup != nil || o.Duration != nil {
		if load == nil || load.Kind != yaml.MappingNode {
			return nil, false
		}
	}
	if o.Warmup != nil {
		edits = append(edits, edit{child(load, "warmup"), o.Warmup.String()})
	}
	if o.Duration != nil {
		edits = append(edits, edit{child(load, "duration"), o.Duration.String()})
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, e := range edits {
		n := e.node
		if n == nil || n.Kind != yaml.ScalarNode || n.Style != 0 || n.Line < 1 || n.Line > len(lines) {
			return nil, false
		}
		line := lines[n.Line-1]
		at := n.Column - 1
		if at < 0 || at+len(n.Value) > len(line) || string(line[at:at+len(n.Value)]) != n.Value {
			return nil, false
		}
		lines[n.Line-1] = slices.Concat(line[:at], []byte(e.value), line[at+len(n.Value):])
	}
	return bytes.Join(lines, nil), true
}

// CurveSteps is how many loaded steps a cost curve runs, besides an idle
// one: five rates spread evenly up to the top pin a line down and leave
// three degrees of freedom to check that it is one.
const CurveSteps = 5

// CurveRates are the load steps of a cost curve up to top requests a
// second: idle (the fixed part's own reading), then CurveSteps rates
// spread evenly from top/CurveSteps to top, rounded to whole requests.
func CurveRates(top float64) ([]float64, error) {
	if !(top >= CurveSteps) || top > MaxRate {
		return nil, fmt.Errorf("--curve up to %g req/s: want %d to %g", top, CurveSteps, float64(MaxRate))
	}
	rates := []float64{0}
	for i := 1; i <= CurveSteps; i++ {
		rates = append(rates, math.Round(top*float64(i)/CurveSteps))
	}
	return rates, nil
}

// TopRate is the highest rate of s's open-model load (0 for the closed
// model).
func (l Load) TopRate() float64 {
	var top float64
	for _, st := range l.Steps() {
		top = max(top, st.Rate)
	}
	return top
}
