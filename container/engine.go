// Package container drives a container engine's command line, Podman's or
// Docker's, for toll: it finds an engine that answers, turns a service into
// the arguments of a `run` that places the container in the service's
// cgroup on the host's network, and lists and removes the containers toll
// labelled.
//
// toll talks to the engines through their CLIs, not their APIs: the CLI is
// what users have, both engines take the same flags for what toll needs, and
// Podman has no daemon to talk to.
package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Engine names.
const (
	Podman = "podman"
	Docker = "docker"
)

// askTimeout bounds one question to an engine (info, ps, rm).
const askTimeout = 30 * time.Second

// Engine is a container engine's CLI that answered.
type Engine struct {
	// Name is Podman or Docker.
	Name string
	// Path is the CLI's executable.
	Path string
	// Runtime is the OCI runtime the engine runs containers with (runc,
	// crun), as it reports it or as toll chose it.
	Runtime string
	// CgroupVersion is "v1" or "v2", as the engine reports it.
	CgroupVersion string
	// global are flags that go before every command (podman only).
	global []string
}

// Find returns the engine named want (Podman or Docker), or with "auto" or
// "" the first of them that answers. The error says why each one tried did
// not.
func Find(ctx context.Context, want string) (*Engine, error) {
	names := []string{Podman, Docker}
	switch want {
	case "", "auto":
	case Podman, Docker:
		names = []string{want}
	default:
		return nil, fmt.Errorf("container engine %q: want podman, docker or auto", want)
	}
	var errs []error
	for _, n := range names {
		e, err := open(ctx, n)
		if err == nil {
			return e, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no container engine answers: %w", errors.Join(errs...))
}

// Installed returns every engine whose CLI is on PATH, without asking it
// anything (podman info takes a second or two; every run's cleanup of what
// killed runs left only lists and removes containers, and ps answers in a
// tenth of that). Its Runtime and CgroupVersion are unknown.
func Installed() []*Engine {
	var out []*Engine
	for _, n := range []string{Podman, Docker} {
		if path, err := exec.LookPath(n); err == nil {
			e := &Engine{Name: n, Path: path}
			if n == Podman {
				e.global = []string{"--cgroup-manager=cgroupfs"}
			}
			out = append(out, e)
		}
	}
	return out
}

// IsNotRunning reports whether err says that the engine has no daemon to
// answer (Docker's CLI without dockerd): then it holds no container either.
func IsNotRunning(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Cannot connect to the Docker daemon")
}

// open finds engine name's CLI and asks it how it runs containers.
func open(ctx context.Context, name string) (*Engine, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e := &Engine{Name: name, Path: path}
	switch name {
	case Podman:
		// cgroupfs: --cgroup-parent is then a path in the cgroup tree
		// (with systemd it must name a slice), so toll's own cgroup
		// can be the parent on every host.
		e.global = []string{"--cgroup-manager=cgroupfs"}
		out, err := e.ask(ctx, "info", "--format", "{{.Host.OCIRuntime.Name}} {{.Host.CgroupsVersion}}")
		if err != nil {
			return nil, err
		}
		f := strings.Fields(out)
		if len(f) != 2 {
			return nil, fmt.Errorf("podman info: unexpected answer %q", out)
		}
		e.Runtime, e.CgroupVersion = f[0], f[1]
		// crun cannot run a container in a v1 (hybrid) cgroup layout
		// on every kernel (it fails on this project's CI machine);
		// runc can. Prefer runc there when it is installed.
		if e.CgroupVersion == "v1" && e.Runtime != "runc" {
			if _, err := exec.LookPath("runc"); err == nil {
				e.Runtime = "runc"
				e.global = append(e.global, "--runtime=runc")
			}
		}
	case Docker:
		out, err := e.ask(ctx, "info", "--format", "{{.CgroupDriver}} {{.CgroupVersion}} {{.DefaultRuntime}}")
		if err != nil {
			return nil, err
		}
		f := strings.Fields(out)
		if len(f) != 3 {
			return nil, fmt.Errorf("docker info: unexpected answer %q", out)
		}
		if f[0] != "cgroupfs" {
			return nil, fmt.Errorf("docker: the daemon's cgroup driver is %s; toll places containers in its own cgroup tree with --cgroup-parent, which needs the cgroupfs driver (dockerd --exec-opt native.cgroupdriver=cgroupfs)", f[0])
		}
		e.CgroupVersion, e.Runtime = "v"+f[1], f[2]
	}
	return e, nil
}

// Command returns the argv of engine subcommand args, with the engine's
// global flags.
func (e *Engine) Command(args ...string) []string {
	return append(append([]string{e.Path}, e.global...), args...)
}

// ask runs an engine subcommand and returns its output, trimmed; its error
// carries what the engine said.
func (e *Engine) ask(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	argv := e.Command(args...)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return "", fmt.Errorf("%s %s: %w: %s", e.Name, args[0], err, msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}
