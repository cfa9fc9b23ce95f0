package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTailLines(t *testing.T) {
	long := strings.Repeat("x", maxTailBytes)
	tests := []struct {
		name    string
		content string
		start   int64
		n       int
		want    []string
	}{
		{"empty", "", 0, 5, nil},
		{"fewer lines than asked", "a\nb\n", 0, 5, []string{"a", "b"}},
		{"last n", "a\nb\nc\nd\n", 0, 2, []string{"c", "d"}},
		{"no final newline", "a\nb", 0, 5, []string{"a", "b"}},
		{"after start", "old\nnew\n", 4, 5, []string{"new"}},
		{"start past end", "a\n", 100, 5, []string{"a"}},
		{"zero", "a\n", 0, 0, nil},
		{"long log keeps whole lines", "first\n" + long + "\nlast\n", 0, 5, []string{"last"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := tailLines(path, tt.start, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("tailLines = %q, want %q", got, tt.want)
			}
		})
	}
}
