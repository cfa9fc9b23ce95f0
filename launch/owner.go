package launch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// tcpListen is the state of a listening socket in /proc/net/tcp{,6}.
const tcpListen = 0x0A

// resolveTimeout bounds the lookup of a readiness host name.
const resolveTimeout = 2 * time.Second

// OwnerError reports a readiness address that answered, but whose listening
// socket belongs to a process outside the service: the service would not be
// the one measured.
type OwnerError struct {
	// Addr is the address the readiness check reached.
	Addr netip.AddrPort
	// Pid and Comm name the process that holds the listening socket; Pid
	// is 0 when toll cannot see which process does.
	Pid  int
	Comm string
	// Root is the pid of the service toll started.
	Root int
}

// Error names the address and the process that holds it.
func (e *OwnerError) Error() string {
	holder := "a process toll cannot see (another user's, or in another pid namespace)"
	if e.Pid > 0 {
		holder = fmt.Sprintf("pid %d (%s)", e.Pid, e.Comm)
	}
	return fmt.Sprintf("readiness answered on %s, but %s listens there, not the service (pid %d) or a process it started: another process holds the port, and toll would measure the wrong thing", e.Addr, holder, e.Root)
}

// listener is a listening TCP socket.
type listener struct {
	ip    netip.Addr // as /proc has it: an IPv4 address mapped in tcp6
	port  uint16
	inode uint64
	v6    bool // from /proc/net/tcp6
}

// checkOwner checks that each address the readiness checks of r reach is
// listened on by the process tree of root, or by that of one of others (the
// services started before it in its group: a readiness address may be
// served through one of them, a proxy). It returns an *OwnerError naming
// the process that holds the port otherwise.
//
// The check is skipped where it cannot apply: a readiness host that is not
// an address of this machine, an address no socket of this network
// namespace listens on (the connection went elsewhere), a port in
// forwarded (a container engine holds it and forwards to the service, in a
// network namespace of its own), or a /proc that cannot be read.
func checkOwner(ctx context.Context, proc procfs.FS, r Readiness, root int, others, forwarded []int) error {
	addrs, err := readinessAddrs(ctx, r)
	if err != nil || len(addrs) == 0 {
		return nil
	}
	ls, err := listeners(proc)
	if err != nil {
		return nil
	}
	var tree map[uint64]bool // socket inodes of the trees' processes
	for _, a := range addrs {
		if slices.Contains(forwarded, int(a.Port())) {
			continue
		}
		want := receivers(ls, a.Addr(), a.Port())
		if len(want) == 0 {
			continue
		}
		if tree == nil {
			tree, err = treeSockets(proc, append([]int{root}, others...))
			if err != nil {
				return nil
			}
		}
		for _, l := range want {
			if tree[l.inode] {
				continue
			}
			e := &OwnerError{Addr: a, Root: root}
			e.Pid, e.Comm = socketHolder(proc, l.inode)
			return e
		}
	}
	return nil
}

// readinessAddrs returns the local addresses the readiness checks of r
// connect to: every address its host names that belongs to this machine.
func readinessAddrs(ctx context.Context, r Readiness) ([]netip.AddrPort, error) {
	var hostports []string
	if r.TCP != "" {
		hostports = append(hostports, r.TCP)
	}
	if r.HTTP != "" {
		u, err := url.Parse(r.HTTP)
		if err != nil {
			return nil, err
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		hostports = append(hostports, net.JoinHostPort(u.Hostname(), port))
	}
	local, err := localAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.AddrPort
	for _, hp := range hostports {
		host, portStr, err := net.SplitHostPort(hp)
		if err != nil {
			return nil, err
		}
		port, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil {
			return nil, err
		}
		var ips []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			ips = []netip.Addr{ip}
		} else {
			lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
			ips, err = net.DefaultResolver.LookupNetIP(lctx, "ip", host)
			cancel()
			if err != nil {
				continue
			}
		}
		for _, ip := range ips {
			if ip = ip.Unmap(); isLocal(ip, local) {
				out = append(out, netip.AddrPortFrom(ip, uint16(port)))
			}
		}
	}
	return out, nil
}

// localAddrs returns the addresses of this machine's interfaces.
func localAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// isLocal says whether ip is an address of this machine: loopback, the
// unspecified address (which reaches this machine), or one of local.
func isLocal(ip netip.Addr, local []netip.Addr) bool {
	return ip.IsLoopback() || ip.IsUnspecified() || slices.Contains(local, ip)
}

// listeners returns the listening TCP sockets of this network namespace.
func listeners(proc procfs.FS) ([]listener, error) {
	var out []listener
	for _, v6 := range []bool{false, true} {
		read := proc.NetTCP
		if v6 {
			read = proc.NetTCP6
		}
		lines, err := read()
		if err != nil {
			if v6 && errors.Is(err, fs.ErrNotExist) {
				continue // no IPv6
			}
			return nil, err
		}
		for _, l := range lines {
			ip, ok := netip.AddrFromSlice(l.LocalAddr)
			if l.St == tcpListen && ok {
				out = append(out, listener{ip: ip, port: uint16(l.LocalPort), inode: l.Inode, v6: v6})
			}
		}
	}
	return out, nil
}

// receivers returns the listening sockets of ls that a connection to ip and
// port reaches, as the kernel picks them: a socket of the connection's
// family bound to ip itself, else one of its family bound to the wildcard
// address, else (for IPv4) an IPv6 socket bound to ip as a mapped address,
// else an IPv6 wildcard socket, which takes IPv4 unless it is IPv6-only.
// More than one socket in a tier share the port (SO_REUSEPORT) and each
// gets connections.
func receivers(ls []listener, ip netip.Addr, port uint16) []listener {
	ip = ip.Unmap()
	if ip.IsUnspecified() {
		// A connection to 0.0.0.0 or :: goes to the loopback address.
		if ip.Is4() {
			return receivers(ls, netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
		}
		return receivers(ls, netip.IPv6Loopback(), port)
	}
	v4 := ip.Is4()
	tiers := []func(listener) bool{
		func(l listener) bool { return l.v6 != v4 && l.ip == ip },
		func(l listener) bool { return l.v6 != v4 && l.ip.IsUnspecified() },
	}
	if v4 {
		mapped := netip.AddrFrom16(ip.As16())
		tiers = append(tiers,
			func(l listener) bool { return l.v6 && l.ip == mapped },
			func(l listener) bool { return l.v6 && l.ip.IsUnspecified() },
		)
	}
	for _, in := range tiers {
		var got []listener
		for _, l := range ls {
			if l.port == port && in(l) {
				got = append(got, l)
			}
		}
		if len(got) > 0 {
			return got
		}
	}
	return nil
}

// treeSockets returns the socket inodes held open by the processes of the
// trees rooted at roots: each root and its descendants, followed by parent
// pid (so a launcher or supervisor between toll and the service is no
// matter).
func treeSockets(proc procfs.FS, roots []int) (map[uint64]bool, error) {
	procs, err := proc.AllProcs()
	if err != nil {
		return nil, err
	}
	kids := map[int][]int{}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // exited since the listing
		}
		kids[st.PPID] = append(kids[st.PPID], p.PID)
	}
	inodes := map[uint64]bool{}
	seen := map[int]bool{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if pid <= 0 || seen[pid] {
			continue
		}
		seen[pid] = true
		queue = append(queue, kids[pid]...)
		p, err := proc.Proc(pid)
		if err != nil {
			continue
		}
		targets, err := p.FileDescriptorTargets()
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil, err // a process of the tree toll cannot see into
			}
			continue
		}
		for _, t := range targets {
			if n, ok := socketInode(t); ok {
				inodes[n] = true
			}
		}
	}
	return inodes, nil
}

// socketHolder returns a process that holds the socket inode open, or 0
// when none that toll can read does.
func socketHolder(proc procfs.FS, inode uint64) (int, string) {
	procs, err := proc.AllProcs()
	if err != nil {
		return 0, ""
	}
	for _, p := range procs {
		targets, err := p.FileDescriptorTargets()
		if err != nil {
			continue
		}
		for _, t := range targets {
			if n, ok := socketInode(t); ok && n == inode {
				comm, _ := p.Comm()
				return p.PID, comm
			}
		}
	}
	return 0, ""
}

// socketInode reads the inode of a file descriptor's target "socket:[N]".
func socketInode(target string) (uint64, bool) {
	s, ok := strings.CutPrefix(target, "socket:[")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return n, err == nil
}
