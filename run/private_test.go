package run

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/tollperf/toll/scenario"
)

// TestResultsKeepScenarioSecretsPrivate checks that every file of a new
// results directory that holds a secret of the scenario (a service's env,
// a load header) is its owner's alone, the copy of the scenario first,
// whether the directory is named or made under a root.
func TestResultsKeepScenarioSecretsPrivate(t *testing.T) {
	const (
		secret = "s3cr3t-t0ken"
		src    = `name: private
services:
  - name: a
    command: [a]
    env: {API_KEY: ` + secret + `}
    ready: {http: "http://127.0.0.1:${port:a}/"}
rounds: 2
load:
  target: "http://127.0.0.1:${port:a}"
  requests: [{path: /, headers: {Authorization: "Bearer ` + secret + `"}}]
  rate: 5
  duration: 5s
`
	)
	s, err := scenario.Parse("private.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opt  func(dir string) Options
	}{
		{"--out", func(dir string) Options { return Options{Out: filepath.Join(dir, "run")} }},
		{"under a root", func(dir string) Options { return Options{Root: dir} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := createDir(s, tt.opt(t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			held := 0
			err = filepath.WalkDir(dir.Path, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				if !bytes.Contains(data, []byte(secret)) {
					return nil
				}
				held++
				info, err := d.Info()
				if err != nil {
					return err
				}
				if perm := info.Mode().Perm(); perm&0o077 != 0 {
					t.Errorf("%s holds the scenario's secret at mode %#o, want 0600", path, perm)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if held == 0 {
				t.Error("no file holds the scenario: the copy of it is missing")
			}
		})
	}
}
