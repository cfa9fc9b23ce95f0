package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPrograms(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"bin/app": 0o755, "bin/data": 0o644} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	const load = "load:\n  target: \"http://127.0.0.1:${port:a}\"\n  requests:\n    - {path: /}\n  rate: 5\n  duration: 1s\n"
	svc := func(command string) string {
		return "services:\n  - name: a\n    command: " + command + "\n    measure: true\n"
	}
	tests := []struct {
		name  string
		yaml  string
		field string // "" when the programs are found
		line  int
		msg   string
	}{
		{"in PATH", svc("[sh, -c, 'exec sleep 1']") + load, "", 0, ""},
		{"toll itself", svc("[toll, app, provider]") + load, "", 0, ""},
		{"a relative path from the scenario's directory", svc("[bin/app]") + load, "", 0, ""},
		{"an absolute path", svc("["+filepath.Join(dir, "bin/app")+"]") + load, "", 0, ""},
		{"a placeholder", svc("[\"${sink}\"]") + load, "", 0, ""},
		{"misspelt", svc("[nosuch-program-xyz, --flag]") + load, "services[0].command[0]", 3, "nosuch-program-xyz: no such program in PATH"},
		{"a path that is not there", svc("[./bin/ap]") + load, "services[0].command[0]", 3, "./bin/ap (" + filepath.Join(dir, "bin/ap") + "): no such file"},
		{"not executable", svc("[bin/data]") + load, "services[0].command[0]", 3, "is not executable"},
		{"a word without a slash is looked up in PATH only", svc("[bin]") + load, "services[0].command[0]", 3, "bin: no such program in PATH"},
		{"a directory by path", svc("[./bin]") + load, "services[0].command[0]", 3, "is a directory"},
		{"the PATH of the service's env", "services:\n  - name: a\n    command: [app]\n    env: {PATH: " + filepath.Join(dir, "bin") + "}\n    measure: true\n" + load, "", 0, ""},
		{"not in the PATH of the service's env", "services:\n  - name: a\n    command: [sh]\n    env: {PATH: " + filepath.Join(dir, "bin") + "}\n    measure: true\n" + load,
			"services[0].command[0]", 3, "sh: no such program in the PATH its env sets (" + filepath.Join(dir, "bin") + ")"},
		{"a readiness command", "services:\n  - name: a\n    command: [bin/app]\n    ready: {command: [curlx, -sf, \"http://127.0.0.1:${port:a}/\"]}\n    measure: true\n" + load,
			"services[0].ready.command[0]", 4, "curlx: no such program in PATH"},
		{"a variant's command", svc("[bin/app]") + load + "variants:\n  - name: baseline\n  - name: other\n    services:\n      a:\n        command: [bin/other]\n",
			"variants[1].services.a.command[0]", 16, "no such file"},
		{"an image's command is the image's", "services:\n  - name: a\n    image: localhost/app:1\n    command: [/app]\n    measure: true\n" + load, "", 0, ""},
		{"prepare may build the programs", "job:\n  command: [./bin/built]\nvariants:\n  - name: baseline\n    prepare: [sh, -c, 'true']\n", "", 0, ""},
		{"but prepare's own program must be there", "job:\n  command: [./bin/built]\nvariants:\n  - name: baseline\n    prepare: [makex]\n",
			"variants[0].prepare[0]", 5, "makex: no such program in PATH"},
		{"a job", "job:\n  command: [./bin/jobx]\n", "job.command[0]", 2, "no such file"},
		{"a variant's job in the PATH of the variant's job env", "job:\n  command: [sh, -c, 'true']\nvariants:\n  - name: baseline\n  - name: other\n    job:\n      command: [app]\n      env: {PATH: " + filepath.Join(dir, "bin") + "}\n", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, "s.yaml")
			s, err := parse(file, []byte(tt.yaml), testMachine)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			err = s.CheckPrograms()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("CheckPrograms: %v, want nil", err)
				}
				return
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("CheckPrograms: %v, want an *Error at %s", err, tt.field)
			}
			if se.File != file || se.Field != tt.field || se.Line != tt.line || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("CheckPrograms: %v\nwant %s:%d: %s: …%s…", err, file, tt.line, tt.field, tt.msg)
			}
		})
	}
}
