// Package portowner names the process that holds an address, so that a
// "port in use" error can say which one: it reads the kernel's socket
// tables (/proc/net/tcp, tcp6, udp, udp6) for the socket's inode and then
// every /proc/PID/fd for the process with that socket open, as ss -p and
// lsof -i do. It is best effort: another user's process shows only to
// root, and on other systems or without /proc it finds nothing
// (docs/operations.md, "Errors at start-up").
package portowner

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Owner is a process with a socket on the address.
type Owner struct {
	PID     int
	Command string // /proc/PID/comm
}

func (o Owner) String() string {
	if o.Command == "" {
		return fmt.Sprintf("pid %d", o.PID)
	}
	return fmt.Sprintf("%s, pid %d", o.Command, o.PID)
}

// Socket is one row of a /proc/net socket table.
type Socket struct {
	Local netip.AddrPort
	// State is the kernel's TCP state (0x0A is LISTEN); UDP sockets
	// bound to a port are 0x07 (TCP_CLOSE).
	State uint8
	Inode uint64
}

// tcpListen is TCP_LISTEN in include/net/tcp_states.h.
const tcpListen = 0x0A

// ParseTable reads a /proc/net/{tcp,tcp6,udp,udp6} table: a header line,
// then one socket per line whose local address is hex in the kernel's
// byte order (each 32-bit word of the address in host order, little
// endian here), the port big endian.
func ParseTable(data []byte) ([]Socket, error) {
	var out []Socket
	sc := bufio.NewScanner(bytes.NewReader(data))
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("socket table line %q: %d fields, want 10 or more", sc.Text(), len(f))
		}
		local, err := parseAddr(f[1])
		if err != nil {
			return nil, err
		}
		st, err := strconv.ParseUint(f[3], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("socket state %q: %w", f[3], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("socket inode %q: %w", f[9], err)
		}
		out = append(out, Socket{Local: local, State: uint8(st), Inode: inode})
	}
	return out, sc.Err()
}

// parseAddr reads "0100007F:0035" (127.0.0.1:53) or its 32-hex-digit
// IPv6 form.
func parseAddr(s string) (netip.AddrPort, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("socket address %q: no port", s)
	}
	raw, err := hex.DecodeString(host)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("socket address %q: want 8 or 32 hex digits", s)
	}
	// Each 32-bit word is in little-endian host order.
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("socket port %q: %w", port, err)
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr, uint16(p)), nil
}

// holds says a socket bound to local holds addr: the same address and port,
// or a wildcard address of either family on its port.
func holds(local, addr netip.AddrPort) bool {
	if local.Port() != addr.Port() {
		return false
	}
	l := local.Addr().Unmap()
	return l == addr.Addr().Unmap() || l.IsUnspecified()
}

// Finder looks in a /proc tree ("/proc" on Linux; tests use a fake tree).
type Finder struct{ Proc string }

// Find returns the processes with a socket that holds addr on network
// ("tcp": listening sockets, "udp"), without duplicates, by pid; none when
// /proc does not tell.
func (f Finder) Find(network string, addr netip.AddrPort) []Owner {
	inodes := map[uint64]bool{}
	for _, table := range []string{network, network + "6"} {
		data, err := os.ReadFile(filepath.Join(f.Proc, "net", table))
		if err != nil {
			continue
		}
		socks, err := ParseTable(data)
		if err != nil {
			continue
		}
		for _, s := range socks {
			if network == "tcp" && s.State != tcpListen {
				continue
			}
			if holds(s.Local, addr) && s.Inode != 0 {
				inodes[s.Inode] = true
			}
		}
	}
	if len(inodes) == 0 {
		return nil
	}
	return f.processes(inodes)
}

// processes are those with a descriptor on one of the socket inodes.
func (f Finder) processes(inodes map[uint64]bool) []Owner {
	entries, err := os.ReadDir(f.Proc)
	if err != nil {
		return nil
	}
	var out []Owner
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds := filepath.Join(f.Proc, e.Name(), "fd")
		fdEntries, err := os.ReadDir(fds)
		if err != nil {
			continue // not ours to read, or gone
		}
		for _, fd := range fdEntries {
			target, err := os.Readlink(filepath.Join(fds, fd.Name()))
			if err != nil {
				continue
			}
			if ino, ok := socketInode(target); ok && inodes[ino] {
				comm, _ := os.ReadFile(filepath.Join(f.Proc, e.Name(), "comm"))
				out = append(out, Owner{PID: pid, Command: strings.TrimSpace(string(comm))})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b Owner) int { return a.PID - b.PID })
	return out
}

// socketInode reads a descriptor's link "socket:[12345]".
func socketInode(target string) (uint64, bool) {
	s, ok := strings.CutPrefix(target, "socket:[")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "]")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// Parenthesized is Describe as " (systemd-resolve, pid 612)", to follow
// an "already in use by another process" message, or "" when none is found.
func Parenthesized(addr string, networks ...string) string {
	if w := Describe(addr, networks...); w != "" {
		return " (" + w + ")"
	}
	return ""
}

// Describe names the processes holding addr on any of networks,
// "systemd-resolve, pid 612" (several joined by "; "), or "" when none is
// found.
func Describe(addr string, networks ...string) string {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return ""
	}
	f := Finder{Proc: "/proc"}
	var owners []Owner
	for _, n := range networks {
		for _, o := range f.Find(n, ap) {
			if !slices.Contains(owners, o) {
				owners = append(owners, o)
			}
		}
	}
	names := make([]string, len(owners))
	for i, o := range owners {
		names[i] = o.String()
	}
	return strings.Join(names, "; ")
}
