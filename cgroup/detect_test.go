package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	for v, want := range map[Version]string{V1: "v1", V2: "v2", 0: "Version(0)"} {
		if got := v.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(v), got, want)
		}
	}
}

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		file    string
		v2      bool
		v1      [numV1]string // mountpoints; empty = missing
		v1Err   string
		v1RO    bool
		special string // a mountpoint that must appear, unescaped
	}{
		{file: "mountinfo.hybrid",
			v1: [numV1]string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/memory"}},
		{file: "mountinfo.v1-systemd",
			v1: [numV1]string{"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/memory"}},
		{file: "mountinfo.docker-v1-ro", v1RO: true,
			v1: [numV1]string{"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/memory"}},
		{file: "mountinfo.v2", v2: true, v1Err: "cpu, cpuacct, cpuset, memory", special: "/mnt/my disk"},
		{file: "mountinfo.none", v1Err: "cpu, cpuacct, cpuset, memory"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			entries, err := parseMountinfo(fixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := findV2Mount(entries, "/sys/fs/cgroup"); ok != tt.v2 {
				t.Errorf("v2 at /sys/fs/cgroup = %v, want %v", ok, tt.v2)
			}
			if tt.special != "" {
				found := false
				for _, e := range entries {
					found = found || e.mountpoint == tt.special
				}
				if !found {
					t.Errorf("mountpoint %q not found", tt.special)
				}
			}
			mounts, err := selectV1Mounts(entries)
			if tt.v1Err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.v1Err) {
					t.Errorf("selectV1Mounts err = %v, want it to mention %q", err, tt.v1Err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range mounts {
				if m.mountpoint != tt.v1[i] || m.readOnly != tt.v1RO {
					t.Errorf("%s: mount %q ro=%v, want %q ro=%v", v1Controllers()[i], m.mountpoint, m.readOnly, tt.v1[i], tt.v1RO)
				}
			}
			if tt.v1RO {
				if _, err := probeV1(entries); err == nil || !strings.Contains(err.Error(), "read-only") {
					t.Errorf("probeV1 err = %v, want read-only", err)
				}
			}
		})
	}
	if _, err := parseMountinfo([]byte("1 2 3\n")); err == nil {
		t.Error("want error for a malformed line")
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/x\134y`: `/x\y`, `/tail\04`: `/tail\04`, "/plain": "/plain"} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProbeV2 runs the v2 checks against a fake cgroup2 root.
func TestProbeV2(t *testing.T) {
	dir := t.TempDir()
	entries := []mountEntry{{mountpoint: dir, fstype: "cgroup2"}}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := probeV2(entries, dir); err == nil || !strings.Contains(err.Error(), "cgroup.controllers") {
		t.Errorf("no controllers file: err = %v", err)
	}
	write("cpu io memory pids\n")
	if _, err := probeV2(entries, dir); err == nil || !strings.Contains(err.Error(), "cpuset") {
		t.Errorf("missing cpuset: err = %v", err)
	}
	write("cpuset cpu io memory hugetlb pids rdma misc\n")
	l, err := probeV2(entries, dir)
	if os.Geteuid() == 0 && err != nil {
		t.Fatalf("probeV2: %v", err)
	}
	if err == nil && (l.version != V2 || l.mount != dir || len(l.controllers) != 3) {
		t.Errorf("layout = %+v", l)
	}
	ro := []mountEntry{{mountpoint: dir, fstype: "cgroup2", readOnly: true}}
	if _, err := probeV2(ro, dir); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only: err = %v", err)
	}
	shadowed := append(entries, mountEntry{mountpoint: dir, fstype: "tmpfs"})
	if _, err := probeV2(shadowed, dir); err == nil {
		t.Error("cgroup2 shadowed by tmpfs: want error")
	}
}

func TestResolveV1Mount(t *testing.T) {
	root := t.TempDir()
	co := filepath.Join(root, "cpu,cpuacct")
	if err := os.Mkdir(co, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := resolveV1Mount("cpu", co); err == nil {
		t.Error("co-mounted without symlink: want error")
	}
	if err := os.Symlink("cpu,cpuacct", filepath.Join(root, "cpu")); err != nil {
		t.Fatal(err)
	}
	m, err := resolveV1Mount("cpu", co)
	if err != nil {
		t.Fatal(err)
	}
	if m.dir != filepath.Join(root, "cpu") || m.libRoot != root || m.real != co {
		t.Errorf("got %+v", m)
	}
	mem := filepath.Join(root, "memory")
	if err := os.Mkdir(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	if m, err := resolveV1Mount("memory", mem); err != nil || m.dir != mem || m.libRoot != root {
		t.Errorf("got %+v, %v", m, err)
	}
}

func TestLimitsCheck(t *testing.T) {
	tests := []struct {
		l       Limits
		quota   int64
		wantErr bool
	}{
		{l: Limits{}, quota: 0},
		{l: Limits{CPULimit: 0.5}, quota: 50000},
		{l: Limits{CPULimit: 2}, quota: 200000},
		{l: Limits{CPULimit: 0.01}, quota: 1000},
		{l: Limits{CPULimit: 0.001}, wantErr: true},
		{l: Limits{CPULimit: -1}, wantErr: true},
		{l: Limits{MemoryLimit: -1}, wantErr: true},
		{l: Limits{CPUs: " 1"}, wantErr: true},
	}
	for _, tt := range tests {
		q, err := tt.l.check()
		if (err != nil) != tt.wantErr || (!tt.wantErr && q != tt.quota) {
			t.Errorf("%+v.check() = %d, %v; want %d (err %v)", tt.l, q, err, tt.quota, tt.wantErr)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"run-1", "baseline.consumer", "a b"} {
		if err := checkName(ok); err != nil {
			t.Errorf("checkName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "a\nb", strings.Repeat("x", 300)} {
		if err := checkName(bad); err == nil {
			t.Errorf("checkName(%q): want error", bad)
		}
	}
}

func TestEnterErrors(t *testing.T) {
	if err := Enter(nil); err == nil {
		t.Error("Enter(nil): want error")
	}
	bad := filepath.Join(t.TempDir(), "missing", "cgroup.procs")
	if err := Enter([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("Enter(missing): err = %v, want it to name %s", err, bad)
	}
	if err := Enter([]string{"/etc/passwd"}); err == nil {
		t.Error("Enter(non-procs file): want error")
	}
}
