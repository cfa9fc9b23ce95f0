package cli

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildOf checks what toll version reads from the build information:
// the commit and whether the work tree was modified, "unknown" without
// them, and the module's version over toll's own when it has one.
func TestBuildOf(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		name     string
		bi       *debug.BuildInfo
		version  string
		commit   string
		modified bool
	}{
		{"no build information", nil, baseVersion, unknownCommit, false},
		{"no vcs settings", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, baseVersion, unknownCommit, false},
		{"clean", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}}, baseVersion, rev, false},
		{"modified", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}}, baseVersion, rev, true},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3", unknownCommit, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := buildOf(tt.bi)
			if b.Version != tt.version || b.Commit != tt.commit || b.Modified != tt.modified {
				t.Errorf("buildOf = %+v, want version %s commit %s modified %v", b, tt.version, tt.commit, tt.modified)
			}
			if line := b.String(); !strings.Contains(line, "commit "+tt.commit) || strings.Contains(line, "modified") != tt.modified {
				t.Errorf("version line %q does not name commit %s (modified %v)", line, tt.commit, tt.modified)
			}
		})
	}
}

// TestVersionCommand checks toll version's two outputs: a line naming the
// commit, and with --json an object with every field.
func TestVersionCommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		json bool
	}{
		{[]string{"version"}, false},
		{[]string{"version", "--json"}, true},
	} {
		root := newRootCmd(nil)
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(tt.args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if !tt.json {
			if !strings.HasPrefix(out.String(), "toll ") || !strings.Contains(out.String(), "commit ") {
				t.Errorf("%v: %q names no commit", tt.args, out.String())
			}
			continue
		}
		var got map[string]any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%v: %v\n%s", tt.args, err, out.String())
		}
		for _, k := range []string{"version", "commit", "modified", "go", "os", "arch"} {
			if _, ok := got[k]; !ok {
				t.Errorf("%v: no %q in %s", tt.args, k, out.String())
			}
		}
	}
}
