package scenario

import "testing"

// TestServiceCommands checks that a scenario's services are read by name
// as the file gives them, placeholders unexpanded, without validation.
func TestServiceCommands(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       map[string]string
		err        bool
	}{
		{"a command", "services:\n  - {name: p, command: [app, --port, '${port:p}']}\n", map[string]string{"p": `command ["app", "--port", "${port:p}"]`}, false},
		{"an image", "services:\n  - {name: c, image: 'nginx:1.27'}\n", map[string]string{"c": "image nginx:1.27"}, false},
		{"unknown fields kept out", "name: x\nservices:\n  - {name: p, command: [a], cpus: 99}\n", map[string]string{"p": `command ["a"]`}, false},
		{"not YAML", "services: [\n", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ServiceCommands([]byte(tt.yaml))
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want one: %v", err, tt.err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
