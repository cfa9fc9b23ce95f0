package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// knownFields returns the YAML field names of the scenario type named
// typeName (as yaml.v3 names it in errors), for "did you mean" hints.
func knownFields(typeName string) []string {
	types := []any{Scenario{}, Service{}, Ready{}, Variant{}, VariantLoad{}, Override{}, Load{}, Request{}, Trim{}, Pinning{}, FindMax{}, Startup{}, Job{}, LogMetric{}, Scrape{}, Kubernetes{}, Toleration{}, Matrix{}}
	for _, v := range types {
		t := reflect.TypeOf(v)
		if t.Name() != typeName {
			continue
		}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
			if tag != "" && tag != "-" {
				names = append(names, tag)
			}
		}
		return names
	}
	return nil
}

// unmarshalerType is yaml.Unmarshaler: types that parse their own scalars
// (Duration, ByteSize, IntList) and check them there.
var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// checkNumbers walks the YAML node n, which decodes into a value of type t
// at the dotted path, and returns the first number that the decoder takes
// but toll must refuse: a number that is not written as a whole one where
// an integer is meant (yaml.v3 truncates 2.5 to 2 and takes 1e9), and NaN
// or an infinity where any number is meant.
func checkNumbers(file string, n *yaml.Node, t reflect.Type, path string) *Error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	bad := func(format string, args ...any) *Error {
		return &Error{File: file, Line: n.Line, Field: path, Msg: fmt.Sprintf(format, args...)}
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder has refused it
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				if e := checkMerge(file, v, t, path); e != nil {
					return e
				}
				continue
			}
			ft := t
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			} else if f, ok := fieldByTag(t, k.Value); ok {
				ft = f.Type
			} else {
				continue // the decoder has refused it
			}
			if e := checkNumbers(file, v, ft, joinPath(path, k.Value)); e != nil {
				return e
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if e := checkNumbers(file, c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); e != nil {
				return e
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
			return nil
		}
		var f float64
		if err := n.Decode(&f); err == nil && f == math.Trunc(f) {
			return bad("write %s as a whole number, without a decimal point or exponent", n.Value)
		}
		return bad("%s is not a whole number (toll does not round it)", n.Value)
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
			return nil
		}
		var f float64
		if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return bad("%s is not a finite number", n.Value)
		}
	}
	return nil
}

// checkMerge checks the value of a merge key ("<<: *defaults"): a mapping,
// an alias of one, or a list of them, merged into a value of type t.
func checkMerge(file string, v *yaml.Node, t reflect.Type, path string) *Error {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind != yaml.SequenceNode {
		return checkNumbers(file, v, t, path)
	}
	for _, c := range v.Content {
		if e := checkNumbers(file, c, t, path); e != nil {
			return e
		}
	}
	return nil
}

// fieldByTag returns the field of struct type t whose YAML name is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tag := strings.Split(f.Tag.Get("yaml"), ",")[0]; tag == name && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// joinPath appends key to a dotted path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
