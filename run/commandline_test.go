package run

import (
	"slices"
	"testing"
)

func TestCommandLine(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"/tmp/go-build1240676341/b001/exe/toll", "run", "x.yaml"}, []string{"go run ./cmd/toll", "run", "x.yaml"}},
		{[]string{"/usr/local/bin/toll", "run", "x.yaml"}, []string{"/usr/local/bin/toll", "run", "x.yaml"}},
		{[]string{"toll"}, []string{"toll"}},
		{nil, nil},
	} {
		if got := commandLine(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("commandLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
