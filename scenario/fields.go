package scenario

import (
	"reflect"
	"strings"
)

// knownFields returns the YAML field names of the scenario type named
// typeName (as yaml.v3 names it in errors), for "did you mean" hints.
func knownFields(typeName string) []string {
	types := []any{Scenario{}, Service{}, Ready{}, Variant{}, Override{}, Load{}, Request{}, Trim{}, Pinning{}, FindMax{}}
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
