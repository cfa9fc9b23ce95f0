package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// removeTries is how many times Remove asks the engine, removeRetry
	// how long it waits between tries.
	removeTries = 3
	removeRetry = 200 * time.Millisecond
)

// Labels toll puts on every container it runs.
const (
	// LabelRun names the toll run (runid.ID) that started the container:
	// the cleanup of killed runs finds their containers by it.
	LabelRun = "toll.run"
	// LabelService names the variant and service, e.g. "baseline/provider".
	LabelService = "toll.service"
)

// Spec is one container to run.
type Spec struct {
	// Name is the container's name, unique on the host (Name makes one).
	Name string
	// Image is the local image; toll never pulls.
	Image string
	// Argv is the container's command; empty runs the image's own.
	Argv []string
	// Env is the container's environment besides the image's own, as
	// KEY=value entries.
	Env []string
	// Dir is the working directory inside the container; empty means the
	// image's.
	Dir string
	// Labels are put on the container.
	Labels map[string]string
	// CgroupParent is the cgroup the container's cgroup is created in,
	// as a path from the root of each hierarchy (e.g.
	// /toll/quickstart-12@34/baseline.provider); empty leaves it to the
	// engine.
	CgroupParent string
	// CPUs is a cpuset list, CPULimit a quota in cores, Memory a limit in
	// bytes; zero values set none.
	CPUs     string
	CPULimit float64
	Memory   int64
	// Ports are published on the host's loopback; with none the container
	// shares the host's network.
	Ports []Port
}

// Port is a container port published on the host's loopback.
type Port struct {
	// Host is the port on 127.0.0.1, Container the one the container
	// listens on.
	Host, Container int
}

// RunArgs returns the argv that runs spec in the foreground: the CLI stays
// attached (its output is the container's), passes the signals it gets on
// to the container, exits with the container's status, and removes the
// container when it exits.
//
// Without ports the container shares the host's network (--network host):
// toll's services listen on loopback, and on the host's network a
// container's requests take the same path as a process's (no bridge, no
// NAT, no proxy process in the load path). With ports it runs on the
// engine's default network, as a docker-compose service does, and each is
// published on 127.0.0.1 only (--publish 127.0.0.1:HOST:CONTAINER/tcp):
// Podman forwards with netavark's or CNI's NAT rules, Docker with its
// docker-proxy process unless its daemon runs with --userland-proxy=false.
// Its limits on files and processes are toll's own (--ulimit): the
// engines' defaults raise them, which some hosts refuse.
func (e *Engine) RunArgs(spec Spec) ([]string, error) {
	if spec.Image == "" {
		return nil, fmt.Errorf("container %s: no image", spec.Name)
	}
	nofile, nproc, err := ulimits()
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", spec.Name, err)
	}
	args := []string{"run", "--rm", "--name", spec.Name}
	if len(spec.Ports) == 0 {
		args = append(args, "--network", "host")
	}
	for _, p := range spec.Ports {
		if p.Host < 1 || p.Host > 65535 || p.Container < 1 || p.Container > 65535 {
			return nil, fmt.Errorf("container %s: cannot publish port %d at %d: not TCP ports", spec.Name, p.Container, p.Host)
		}
		args = append(args, "--publish", fmt.Sprintf("127.0.0.1:%d:%d/tcp", p.Host, p.Container))
	}
	args = append(args,
		"--ulimit", "nofile="+limit(nofile)+":"+limit(nofile),
		"--ulimit", "nproc="+limit(nproc)+":"+limit(nproc),
		// No registry may be reachable, and toll measures the image it
		// was given, not a newer one.
		"--pull", "never")
	for _, k := range sortedKeys(spec.Labels) {
		args = append(args, "--label", k+"="+spec.Labels[k])
	}
	if spec.CgroupParent != "" {
		args = append(args, "--cgroup-parent", spec.CgroupParent)
	}
	if spec.CPUs != "" {
		args = append(args, "--cpuset-cpus", spec.CPUs)
	}
	if spec.CPULimit > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(spec.CPULimit, 'f', -1, 64))
	}
	if spec.Memory > 0 {
		args = append(args, "--memory", strconv.FormatInt(spec.Memory, 10))
	}
	if spec.Dir != "" {
		args = append(args, "--workdir", spec.Dir)
	}
	for _, kv := range spec.Env {
		args = append(args, "--env", kv)
	}
	args = append(append(args, spec.Image), spec.Argv...)
	return e.Command(args...), nil
}

// Remove removes container name, killing it first if it still runs. A
// container that is not there is not an error.
func (e *Engine) Remove(ctx context.Context, name string) error {
	args := []string{"rm", "--force"}
	if e.Name == Podman {
		args = append(args, "--ignore", "--time", "0")
	}
	var err error
	for try := 0; try < removeTries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(removeRetry):
			}
		}
		_, err = e.ask(ctx, append(args, name)...)
		if err == nil || e.Name == Docker && strings.Contains(err.Error(), "No such container") {
			return nil
		}
		// Podman 4.3 refuses, once, to remove a container whose monitor
		// (conmon) was killed with toll: "container state improper:
		// stopped". The refusal brings its state up to date, and the next
		// try removes it.
	}
	return err
}

// reNameChar is what a container name may not hold.
var reNameChar = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// Name returns a container name made of parts, e.g. Name("toll", "12@34",
// "baseline.provider", "1") = "toll-12-34-baseline.provider-1": characters
// a container name cannot hold become '-'.
func Name(parts ...string) string {
	return reNameChar.ReplaceAllString(strings.Join(parts, "-"), "-")
}

// limit formats a resource limit for --ulimit, where -1 is unlimited.
func limit(v uint64) string {
	if v == unix.RLIM_INFINITY {
		return "-1"
	}
	return strconv.FormatUint(v, 10)
}

// ulimits returns the open-file and process limits for a container: toll's
// own soft limits, with processes capped at kernel.pid_max (a host refuses
// a limit above the pids there can be, as this project's CI machine does).
func ulimits() (nofile, nproc uint64, err error) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0, fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	nofile = l.Cur
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &l); err != nil {
		return 0, 0, fmt.Errorf("RLIMIT_NPROC: %w", err)
	}
	nproc = l.Cur
	if b, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if max, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && max < nproc {
			nproc = max
		}
	}
	return nofile, nproc, nil
}
