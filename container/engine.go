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
				e.global = podmanGlobal()
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
	if name == Podman {
		e.global = podmanGlobal()
	}
	out, err := e.ask(ctx, infoArgs(name)...)
	if err != nil {
		return nil, err
	}
	_, lookErr := exec.LookPath("runc")
	return configure(e, out, lookErr == nil)
}

// podmanGlobal are the flags before every podman command: with the cgroupfs
// manager --cgroup-parent is a path in the cgroup tree, on v1 and v2 alike
// (with systemd it must name a slice, and the container would land in
// systemd's tree instead of toll's), so toll's own cgroup can be the parent
// on every host. Podman run as root may use it whatever the host's init.
func podmanGlobal() []string { return []string{"--cgroup-manager=cgroupfs"} }

// infoArgs is the question open asks engine name: how it places and runs
// containers.
func infoArgs(name string) []string {
	if name == Podman {
		return []string{"info", "--format", "{{.Host.OCIRuntime.Name}} {{.Host.CgroupsVersion}}"}
	}
	return []string{"info", "--format", "{{.CgroupDriver}} {{.CgroupVersion}} {{.DefaultRuntime}}"}
}

// configure completes e from the engine's answer to infoArgs; haveRunc
// says whether runc is installed.
//
// Podman (cgroupfs, above) answers "RUNTIME VERSION", e.g. "crun v2". crun
// cannot run a container in a v1 (hybrid) cgroup layout on every kernel (it
// fails on this project's CI machine); runc can, so toll prefers runc there
// when it is installed. On v2 the engine's own runtime is kept.
//
// Docker answers "DRIVER VERSION RUNTIME", e.g. "cgroupfs 1 runc" or
// "systemd 2 runc". The driver is the daemon's, which toll cannot change
// per container: with cgroupfs --cgroup-parent is a path from the root of
// the hierarchy (v1: of each controller's; v2: of the unified one), as
// toll's groups are; with systemd it must be a slice (NAME.slice) and
// systemd places the container's scope in its own tree, where toll could
// neither apply its limits nor read the container's cost from the
// service's cgroup. That is Docker's default on v2-only hosts that boot
// with systemd, so the error says how to switch.
func configure(e *Engine, answer string, haveRunc bool) (*Engine, error) {
	f := strings.Fields(answer)
	switch e.Name {
	case Podman:
		if len(f) != 2 {
			return nil, fmt.Errorf("podman info: unexpected answer %q", answer)
		}
		e.Runtime, e.CgroupVersion = f[0], f[1]
		if e.CgroupVersion == "v1" && e.Runtime != "runc" && haveRunc {
			e.Runtime = "runc"
			e.global = append(e.global, "--runtime=runc")
		}
	case Docker:
		if len(f) != 3 {
			return nil, fmt.Errorf("docker info: unexpected answer %q", answer)
		}
		e.CgroupVersion, e.Runtime = "v"+f[1], f[2]
		if f[0] != "cgroupfs" {
			return nil, fmt.Errorf("docker: the daemon's cgroup driver is %s (cgroup %s); toll places each container in the service's own cgroup with --cgroup-parent PATH, which only the cgroupfs driver takes as a path (with systemd it must name a slice, in systemd's tree, where toll can neither limit nor read it): run dockerd with --exec-opt native.cgroupdriver=cgroupfs (daemon.json: \"exec-opts\": [\"native.cgroupdriver=cgroupfs\"]), or use podman, which toll runs with --cgroup-manager=cgroupfs", f[0], e.CgroupVersion)
		}
	default:
		return nil, fmt.Errorf("container engine %q: want podman or docker", e.Name)
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
