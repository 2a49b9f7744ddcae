package nodecachenet

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
)

// Defaults, NodeLocal DNSCache's where it has one.
const (
	// DefaultInterfaceName is node-cache's -interfacename default.
	DefaultInterfaceName = "nodelocaldns"
	// DefaultTable is the nftables table (family inet) holding the rules.
	DefaultTable = "dnsplane-nodecache"
	// DefaultLockDir is the directory, a hostPath shared by the node's
	// instances, holding the lock file (see the package comment).
	DefaultLockDir = "/run/dnsplane-nodecache"
	// DefaultPort is DNS.
	DefaultPort = 53
	// linkAlias marks an interface as created by dnsplane (ip link's
	// "alias"), for whoever looks at the node.
	linkAlias = "dnsplane nodecache"
)

// DefaultAddress is the link-local address NodeLocal DNSCache's
// documentation uses, and kubelet's --cluster-dns points at.
var DefaultAddress = netip.MustParseAddr("169.254.20.10")

// Config says what Setup puts in place.
type Config struct {
	// InterfaceName is the dummy interface holding Addresses; empty means
	// DefaultInterfaceName. At most 15 bytes (IFNAMSIZ).
	InterfaceName string
	// Addresses go on the interface (as /32 or /128), and DNS to and from
	// them skips conntrack. At least one; IPv4 and IPv6 may mix.
	Addresses []netip.Addr
	// Ports to and from which TCP and UDP skip conntrack on Addresses;
	// empty means 53. NodeLocal DNSCache adds its health port too.
	Ports []uint16
	// Table is the nftables table (family inet) the rules live in, owned
	// whole by the node cache; empty means DefaultTable.
	Table string
	// LockDir is the directory holding the instances' lock file; empty
	// means DefaultLockDir. It is created if missing.
	LockDir string
	// SkipTeardown leaves the interface and rules in place at Teardown
	// (node-cache's -skipteardown).
	SkipTeardown bool
	// Logger; nil discards.
	Logger *slog.Logger

	// kind is the link type; empty means "dummy". Tests set "ifb" on
	// kernels built without the dummy driver (CONFIG_DUMMY).
	kind string
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.InterfaceName == "" {
		c.InterfaceName = DefaultInterfaceName
	}
	// IFNAMSIZ is 16 with the terminating NUL (linux/if.h); '/' and
	// whitespace are refused by the kernel's dev_valid_name.
	if len(c.InterfaceName) > 15 || strings.ContainsAny(c.InterfaceName, "/: \t\n") || c.InterfaceName == "." || c.InterfaceName == ".." {
		return c, fmt.Errorf("interface name %q: want at most 15 characters, none of '/', ':' or whitespace", c.InterfaceName)
	}
	if len(c.Addresses) == 0 {
		return c, errors.New("no address for the interface")
	}
	var addrs []netip.Addr
	for _, a := range c.Addresses {
		switch {
		case !a.IsValid():
			return c, errors.New("invalid address")
		case a.Zone() != "":
			return c, fmt.Errorf("address %s: a zone is not allowed", a)
		case a.IsUnspecified() || a.IsLoopback() || a.IsMulticast():
			return c, fmt.Errorf("address %s: want a unicast address that is not loopback", a)
		}
		a = a.Unmap()
		if !slices.Contains(addrs, a) {
			addrs = append(addrs, a)
		}
	}
	c.Addresses = addrs
	if len(c.Ports) == 0 {
		c.Ports = []uint16{DefaultPort}
	}
	var ports []uint16
	for _, p := range c.Ports {
		if p == 0 {
			return c, errors.New("port 0")
		}
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	c.Ports = ports
	if c.Table == "" {
		c.Table = DefaultTable
	}
	if c.LockDir == "" {
		c.LockDir = DefaultLockDir
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.kind == "" {
		c.kind = "dummy"
	}
	return c, nil
}
