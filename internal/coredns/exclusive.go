package coredns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"

	"github.com/coredns/caddy/caddyfile"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/parse"
	"github.com/coredns/coredns/plugin/pkg/transport"
)

// CoreDNS binds every listener with SO_REUSEPORT (plugin/pkg/reuseport),
// so on Linux a second CoreDNS run by the same user binds an address the
// first already serves, without an error, and the kernel then spreads
// queries over both: two unrelated `dnsplane up`s on 127.0.0.1:10053 answer
// from two different clusters in turn. Start therefore probes the addresses
// a Corefile will listen on with plain sockets first. A plain bind fails
// with EADDRINUSE when any other socket holds the address, SO_REUSEPORT
// or not, so the probe finds exactly the sharing CoreDNS would allow.
//
// The probe runs before the first start only: a graceful reload hands the
// running listeners to the new instance in this process, and probing then
// would find our own sockets.

// AddrInUseError is returned by Start when another socket (in practice
// another process: a DNS server, or a second dnsplane) already serves an
// address the Corefile listens on. It wraps syscall.EADDRINUSE. Callers add
// the flag or setting that moves the address.
type AddrInUseError struct {
	Network string // "tcp" or "udp"
	Addr    string // HOST:PORT as probed; HOST empty for all addresses
}

func (e *AddrInUseError) Error() string {
	return fmt.Sprintf("%s is already served by another process", e.Addr)
}

func (e *AddrInUseError) Unwrap() error { return syscall.EADDRINUSE }

// checkExclusive returns an *AddrInUseError for the first address corefile
// listens on that another socket holds. Addresses it cannot work out (a
// Corefile that does not parse, an unknown bind interface, port 0) are left
// to CoreDNS, which reports its own errors for them.
func checkExclusive(corefile string) error {
	for _, l := range listenAddrs(corefile) {
		if err := probe(l.network, l.addr); err != nil {
			return err
		}
	}
	return nil
}

// probe binds network/addr without SO_REUSEPORT and releases it.
func probe(network, addr string) error {
	var err error
	switch network {
	case "tcp":
		var l net.Listener
		if l, err = net.Listen(network, addr); err == nil {
			return l.Close()
		}
	case "udp":
		var pc net.PacketConn
		if pc, err = net.ListenPacket(network, addr); err == nil {
			return pc.Close()
		}
	default:
		return fmt.Errorf("probing %s %s: unknown network", network, addr)
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return &AddrInUseError{Network: network, Addr: addr}
	}
	// Anything else (no privilege for the port, an address this host
	// does not have) CoreDNS reports itself.
	return nil
}

type listenAddr struct{ network, addr string }

// listenAddrs returns the sockets CoreDNS will open for corefile, worked
// out the way core/dnsserver does: each server block key's port (or its
// transport's default), on each address the block's bind plugin names
// (IP addresses or interfaces, less its except list), or on all addresses
// without bind.
func listenAddrs(corefile string) []listenAddr {
	blocks, err := caddyfile.Parse("Corefile", strings.NewReader(corefile), Directives())
	if err != nil {
		return nil
	}
	var out []listenAddr
	add := func(network, addr string) {
		if l := (listenAddr{network, addr}); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	for _, b := range blocks {
		hosts, ok := bindHosts(b.Tokens["bind"])
		if !ok {
			continue
		}
		for _, key := range b.Keys {
			trans, rest := parse.Transport(key)
			_, port, err := plugin.SplitHostPort(rest)
			if err != nil {
				continue
			}
			if port == "" {
				port = defaultPort(trans)
			}
			if port == "" || port == "0" {
				continue
			}
			for _, h := range hosts {
				a := net.JoinHostPort(h, port)
				for _, network := range transportNetworks(trans) {
					add(network, a)
				}
			}
		}
	}
	return out
}

// defaultPort is core/dnsserver's port for a key without one.
func defaultPort(trans string) string {
	switch trans {
	case transport.DNS:
		return dnsserver.Port
	case transport.TLS:
		return transport.TLSPort
	case transport.QUIC:
		return transport.QUICPort
	case transport.GRPC:
		return transport.GRPCPort
	case transport.HTTPS, transport.HTTPS3:
		return transport.HTTPSPort
	}
	return ""
}

// transportNetworks are the sockets a server of that transport opens.
func transportNetworks(trans string) []string {
	switch trans {
	case transport.DNS:
		return []string{"udp", "tcp"}
	case transport.TLS, transport.GRPC, transport.HTTPS:
		return []string{"tcp"}
	case transport.QUIC, transport.HTTPS3:
		return []string{"udp"}
	}
	return nil // unix sockets: a path, not an address
}

// bindHosts returns the hosts a server block's bind plugin lines name,
// [""] (all addresses) without bind, and false when one of them is neither
// an IP address nor an interface of this host.
func bindHosts(tokens []caddyfile.Token) ([]string, bool) {
	if len(tokens) == 0 {
		return []string{""}, true
	}
	var addrs, except []string
	d := caddyfile.NewDispenserTokens("Corefile", tokens)
	for d.Next() {
		addrs = append(addrs, d.RemainingArgs()...)
		for d.NextBlock() {
			if d.Val() == "except" {
				except = append(except, d.RemainingArgs()...)
			}
		}
	}
	ips, ok := resolveBind(addrs)
	if !ok {
		return nil, false
	}
	skip, ok := resolveBind(except)
	if !ok {
		return nil, false
	}
	var hosts []string
	for _, ip := range ips {
		if !slices.Contains(skip, ip) && !slices.Contains(hosts, ip) {
			hosts = append(hosts, ip)
		}
	}
	return hosts, true
}

// resolveBind turns bind arguments into IP addresses: literals as they
// are, interface names into the interface's addresses (link-local IPv6
// ones with the interface as zone, as the bind plugin does).
func resolveBind(args []string) ([]string, bool) {
	var out []string
	for _, a := range args {
		if ip, err := netip.ParseAddr(a); err == nil {
			out = append(out, ip.String())
			continue
		}
		iface, err := net.InterfaceByName(a)
		if err != nil {
			return nil, false
		}
		addrs, err := iface.Addrs()
		if err != nil {
			return nil, false
		}
		for _, ia := range addrs {
			p, err := netip.ParsePrefix(ia.String())
			if err != nil {
				continue
			}
			ip := p.Addr()
			if ip.Is6() && (ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast()) {
				ip = ip.WithZone(iface.Name)
			}
			out = append(out, ip.String())
		}
	}
	return out, true
}
