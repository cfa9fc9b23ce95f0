package scenario

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CheckPrograms checks that every program the scenario runs as a process
// on this machine can be found, so that a misspelt command fails before
// anything starts, as an *Error naming its file, line and field, rather
// than after the run has started the services before it: the first word
// of each command of a service run as a process (the variants' own
// commands among them), of readiness commands, and of a job. A first word
// with a slash is a path from the command's directory; one without is
// looked up in the PATH the program runs with (its env's, or toll's).
//
// Words toll resolves itself are left alone ("toll", or a placeholder
// such as ${port:x}), and so are services run from an image. A scenario
// whose variants prepare (prepare, before_each) is checked for those
// commands only: they may build what the others run.
//
// Call it for a run on this machine, not for one in a cluster, whose
// programs are the images'.
func (s *Scenario) CheckPrograms() error {
	var ix *index
	var root yaml.Node
	if err := yaml.Unmarshal(s.Source, &root); err == nil {
		ix = newIndex(&root)
	} else {
		ix = &index{byPath: map[string]int{}}
	}
	fail := func(field, format string, args ...any) error {
		return &Error{File: s.Path, Line: ix.line(field), Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	// check looks for argv's program, run from dir with envs merged in
	// order (a later one's PATH wins).
	check := func(field string, argv []string, dir string, envs ...map[string]string) error {
		if len(argv) == 0 {
			return nil
		}
		path, set := pathIn(envs...)
		if msg := findProgram(argv[0], dir, path, set); msg != "" {
			return fail(field+"[0]", "%s", msg)
		}
		return nil
	}
	prepares := false
	for i, v := range s.Variants {
		p := fmt.Sprintf("variants[%d]", i)
		if err := check(p+".prepare", v.Prepare, s.CommandDir(), nil); err != nil {
			return err
		}
		if err := check(p+".before_each", v.BeforeEach, s.CommandDir(), nil); err != nil {
			return err
		}
		prepares = prepares || len(v.Prepare) > 0 || len(v.BeforeEach) > 0
	}
	if prepares {
		return nil
	}
	for i, svc := range s.Services {
		p := fmt.Sprintf("services[%d]", i)
		if svc.Image == "" {
			if err := check(p+".command", svc.Command, svc.Dir, svc.Env); err != nil {
				return err
			}
		}
		// With toll's environment.
		if err := check(p+".ready.command", svc.Ready.Command, s.ReadyDir(svc), nil); err != nil {
			return err
		}
	}
	for i, v := range s.Variants {
		for _, name := range slices.Sorted(maps.Keys(v.Services)) {
			o := v.Services[name]
			svc, ok := s.Service(name)
			if !ok || svc.Image != "" {
				continue
			}
			if err := check(fmt.Sprintf("variants[%d].services.%s.command", i, name), o.Command, svc.Dir, svc.Env, o.Env); err != nil {
				return err
			}
		}
	}
	if j := s.Job; j != nil {
		if err := check("job.command", j.Command, j.Dir, j.Env); err != nil {
			return err
		}
		for i, v := range s.Variants {
			if err := check(fmt.Sprintf("variants[%d].job.command", i), v.Job.Command, j.Dir, j.Env, v.Job.Env); err != nil {
				return err
			}
		}
	}
	return nil
}

// pathIn returns the PATH a program runs with whose environment is
// toll's with envs merged over it in order: the last of envs to set PATH
// (set), or toll's.
func pathIn(envs ...map[string]string) (path string, set bool) {
	for _, env := range slices.Backward(envs) {
		if p, ok := env["PATH"]; ok {
			return p, true
		}
	}
	return os.Getenv("PATH"), false
}

// findProgram says why the program name, run from dir with PATH path,
// cannot be found, or returns "" when it can, or when toll resolves the
// word itself (toll, a placeholder) or PATH is one toll expands. The
// message quotes PATH when the command's env set it (set).
func findProgram(name, dir, path string, set bool) string {
	switch {
	case name == "toll" || strings.Contains(name, "${"):
		return ""
	case strings.Contains(name, "/"):
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if msg := notExecutable(p); msg != "" {
			if p != name {
				return fmt.Sprintf("%s (%s): %s", name, p, msg)
			}
			return fmt.Sprintf("%s: %s", name, msg)
		}
		return ""
	case strings.Contains(path, "${"):
		return ""
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			// As Go's exec.LookPath: a program is not run from a
			// relative directory of PATH, the current one included.
			continue
		}
		if notExecutable(filepath.Join(d, name)) == "" {
			return ""
		}
	}
	if set {
		return fmt.Sprintf("%s: no such program in the PATH its env sets (%s); give its path, or install it", name, path)
	}
	return fmt.Sprintf("%s: no such program in PATH; give its path, or install it", name)
}

// notExecutable says why the file at p cannot be run, or returns "".
func notExecutable(p string) string {
	st, err := os.Stat(p)
	switch {
	case os.IsNotExist(err):
		return "no such file"
	case err != nil:
		return err.Error()
	case st.IsDir():
		return "is a directory"
	case st.Mode()&0o111 == 0:
		return "is not executable (chmod +x)"
	}
	return ""
}
