package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// holdPort starts the HTTP helper as a process of its own, outside any
// service, listening on addr, and returns its pid and name once it listens.
func holdPort(t *testing.T, addr string) (int, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperEnv+"=http", addrEnv+"="+addr, delayEnv+"=0s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the port holder never listened on %s", addr)
		}
	}
	p, err := procfs.NewProc(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	comm, err := p.Comm()
	if err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, comm
}

// TestReadinessAnsweredByAnotherProcess starts a service whose readiness
// address another process holds: the start must fail, naming that process,
// whether the service would listen there itself or not.
func TestReadinessAnsweredByAnotherProcess(t *testing.T) {
	addr := freeAddr(t)
	pid, comm := holdPort(t, addr)
	want := fmt.Sprintf("but pid %d (%s) listens there", pid, comm)
	tests := []struct {
		name string
		spec func() Spec
	}{
		{"http readiness, service that does not listen", func() Spec {
			s := shSpec(t, "quiet", "sleep 30")
			s.Ready = Readiness{HTTP: "http://" + addr + "/", Timeout: 5 * time.Second}
			return s
		}},
		{"tcp readiness, service that does not listen", func() Spec {
			s := shSpec(t, "quiet", "sleep 30")
			s.Ready = Readiness{TCP: addr, Timeout: 5 * time.Second}
			return s
		}},
		{"service that finds its port taken", func() Spec {
			s := helperSpec(t, addr, 0)
			s.Ready = Readiness{HTTP: "http://" + addr + "/", Timeout: 5 * time.Second}
			return s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(context.Background(), tt.spec())
			if err == nil {
				s.Stop(0)
				t.Fatal("the service started although another process answers its readiness")
			}
			var oe *OwnerError
			var se *StartError
			if !errors.As(err, &oe) || !errors.As(err, &se) || oe.Pid != pid || !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want a *StartError with an *OwnerError saying %q", err, want)
			}
		})
	}
}

// TestReadinessAnsweredByTheServiceTree starts services whose readiness
// address is held by a child of the service (a shell wrapper that does not
// exec), or by an earlier service of its group (a proxy): they start.
func TestReadinessAnsweredByTheServiceTree(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("child of the service", func(t *testing.T) {
		addr := freeAddr(t)
		spec := shSpec(t, "wrapped", `"$0"; echo done`)
		spec.Argv = append(spec.Argv, self)
		spec.Env = append(os.Environ(), helperEnv+"=http", addrEnv+"="+addr, delayEnv+"=0s")
		spec.Ready = Readiness{HTTP: "http://" + addr + "/", Timeout: 5 * time.Second}
		s, err := Start(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		stopOnCleanup(t, s)
	})
	t.Run("earlier service of the group", func(t *testing.T) {
		addr := freeAddr(t)
		first := helperSpec(t, addr, 0)
		first.Ready = Readiness{HTTP: "http://" + addr + "/", Timeout: 5 * time.Second}
		second := shSpec(t, "behind", "sleep 30")
		second.Ready = Readiness{TCP: addr, Timeout: 5 * time.Second}
		g, err := StartGroup(context.Background(), context.Background(), []Spec{first, second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Stop(0) })
	})
}

func TestReceivers(t *testing.T) {
	a := netip.MustParseAddr
	ls := []listener{
		{ip: a("127.0.0.1"), port: 80, inode: 1},
		{ip: a("0.0.0.0"), port: 80, inode: 2},
		{ip: a("::"), port: 80, inode: 3, v6: true},
		{ip: a("0.0.0.0"), port: 81, inode: 4},
		{ip: a("::"), port: 81, inode: 5, v6: true},
		{ip: a("::ffff:127.0.0.1"), port: 82, inode: 6, v6: true},
		{ip: a("::"), port: 82, inode: 7, v6: true},
		{ip: a("::"), port: 83, inode: 8, v6: true},
		{ip: a("127.0.0.1"), port: 84, inode: 9},
		{ip: a("127.0.0.1"), port: 84, inode: 10}, // SO_REUSEPORT
	}
	tests := []struct {
		ip   string
		port uint16
		want []uint64
	}{
		{"127.0.0.1", 80, []uint64{1}},
		{"10.0.0.5", 80, []uint64{2}},
		{"::1", 80, []uint64{3}},
		{"127.0.0.1", 81, []uint64{4}},
		{"::1", 81, []uint64{5}},
		{"127.0.0.1", 82, []uint64{6}},
		{"127.0.0.1", 83, []uint64{8}},
		{"0.0.0.0", 80, []uint64{1}},
		{"127.0.0.1", 84, []uint64{9, 10}},
		{"127.0.0.1", 85, nil},
		{"::1", 84, nil},
	}
	for _, tt := range tests {
		var got []uint64
		for _, l := range receivers(ls, a(tt.ip), tt.port) {
			got = append(got, l.inode)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:%d reaches %v, want %v", tt.ip, tt.port, got, tt.want)
		}
	}
}

// TestReadinessAddrs checks which readiness addresses the owner check
// looks at: local ones only.
func TestReadinessAddrs(t *testing.T) {
	tests := []struct {
		r    Readiness
		want string // the addresses, sorted, joined by spaces
	}{
		{Readiness{TCP: "127.0.0.1:8080"}, "127.0.0.1:8080"},
		{Readiness{HTTP: "http://127.0.0.1/health"}, "127.0.0.1:80"},
		{Readiness{HTTP: "https://[::1]:8443/health"}, "[::1]:8443"},
		{Readiness{HTTP: "http://0.0.0.0:9000/"}, "0.0.0.0:9000"},
		{Readiness{TCP: "192.0.2.1:80"}, ""}, // TEST-NET: not this machine
		{Readiness{TCP: "127.0.0.1:1", HTTP: "http://127.0.0.1:2/"}, "127.0.0.1:1 127.0.0.1:2"},
	}
	for _, tt := range tests {
		addrs, err := readinessAddrs(context.Background(), tt.r)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		slices.Sort(got)
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%+v: %v, want %q", tt.r, got, tt.want)
		}
	}
}

// TestReadinessAnsweredByAMember starts a service whose readiness address
// is held by a process outside its tree, as a container's engine starts the
// container's processes, but listed in a cgroup of the service's Members: the
// start succeeds; without Members it fails as for any other process.
func TestReadinessAnsweredByAMember(t *testing.T) {
	addr := freeAddr(t)
	pid, _ := holdPort(t, addr)
	// A directory standing for the container's cgroup, listing the holder.
	dir := t.TempDir()
	procs := dir + "/cgroup.procs"
	if err := os.WriteFile(procs, []byte(fmt.Sprintf("%d\n", pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, members := range [][]string{{procs}, nil} {
		spec := shSpec(t, "container-cli", "exec sleep 100")
		spec.Ready = Readiness{TCP: addr, Timeout: 5 * time.Second}
		spec.Members = members
		s, err := Start(context.Background(), spec)
		var oe *OwnerError
		switch {
		case members != nil && err != nil:
			t.Errorf("with the holder among the members: %v", err)
		case members == nil && !errors.As(err, &oe):
			t.Errorf("without members: %v, want an *OwnerError", err)
		}
		if s != nil {
			s.Stop(time.Second)
		}
	}
}

// TestReadinessOnAForwardedPort starts a service whose readiness port is
// held by a process neither in its tree nor among its members, as a
// container engine's forwarder holds a published port (Docker's
// docker-proxy): with the port in Forwarded the start succeeds; without, it
// fails as for any other process.
func TestReadinessOnAForwardedPort(t *testing.T) {
	addr := freeAddr(t)
	holdPort(t, addr)
	_, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		t.Fatal(err)
	}
	for _, forwarded := range [][]int{{port}, nil} {
		spec := shSpec(t, "container-cli", "exec sleep 100")
		spec.Ready = Readiness{TCP: addr, Timeout: 5 * time.Second}
		spec.Forwarded = forwarded
		s, err := Start(context.Background(), spec)
		var oe *OwnerError
		switch {
		case forwarded != nil && err != nil:
			t.Errorf("with the port forwarded: %v", err)
		case forwarded == nil && !errors.As(err, &oe):
			t.Errorf("without: %v, want an *OwnerError", err)
		}
		if s != nil {
			s.Stop(time.Second)
		}
	}
}
