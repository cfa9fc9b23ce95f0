package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ServiceCommands reads how each service of a scenario's source is run,
// by name: its image and its command as the file gives them, before any
// placeholder is filled in. It neither defaults nor validates, so that a
// results directory's copy of its scenario can be read on any machine,
// to tell whether two runs ran the same services.
func ServiceCommands(data []byte) (map[string]string, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%d bytes is over toll's limit of %d for a scenario", len(data), MaxFileSize)
	}
	var doc struct {
		Services []struct {
			Name    string   `yaml:"name"`
			Command []string `yaml:"command"`
			Image   string   `yaml:"image"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("YAML: %w", err)
	}
	out := map[string]string{}
	for _, s := range doc.Services {
		var parts []string
		if s.Image != "" {
			parts = append(parts, "image "+s.Image)
		}
		if len(s.Command) > 0 {
			words := make([]string, len(s.Command))
			for i, w := range s.Command {
				words[i] = strconv.Quote(w)
			}
			parts = append(parts, "command ["+strings.Join(words, ", ")+"]")
		}
		out[s.Name] = strings.Join(parts, ", ")
	}
	return out, nil
}
