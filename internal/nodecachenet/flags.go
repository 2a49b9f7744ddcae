package nodecachenet

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/spf13/pflag"
)

// Flags are the node cache command's flags for the node's network
// (docs/kubernetes.md, "The node cache on your nodes").
type Flags struct {
	SetupInterface bool
	InterfaceName  string
	LocalIPs       []string
	SkipTeardown   bool
}

// AddFlags adds --setup-interface, --interface-name, --local-ip and
// --skip-teardown to fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&f.SetupInterface, "setup-interface", false, "put the --local-ip addresses on a dummy interface and keep DNS to and from them out of conntrack (nftables NOTRACK rules); the node's last instance removes both at exit (needs CAP_NET_ADMIN and the host's network)")
	fs.StringVar(&f.InterfaceName, "interface-name", DefaultInterfaceName, "dummy interface for --setup-interface")
	fs.StringSliceVar(&f.LocalIPs, "local-ip", nil, "IP,... for --setup-interface's interface and rules (default: the IPs of --listen)")
	fs.BoolVar(&f.SkipTeardown, "skip-teardown", false, "with --setup-interface, leave the interface and rules in place at exit")
}

// Config is the Config f asks for, for a node cache listening on listen
// (ADDR:PORT, the --listen flag). endpoints (ADDR:PORT of the health,
// ready and metrics endpoints; empty ones are skipped) on one of the
// addresses get their ports excluded from conntrack too, as node-cache
// does for its health port. Errors name the flag at fault.
func (f Flags) Config(listen []string, endpoints ...string) (Config, error) {
	if _, err := (Config{InterfaceName: f.InterfaceName, Addresses: []netip.Addr{DefaultAddress}}).withDefaults(); err != nil {
		return Config{}, fmt.Errorf("--interface-name: %w", err)
	}
	c := Config{InterfaceName: f.InterfaceName, SkipTeardown: f.SkipTeardown}
	var listenPorts []uint16
	for _, l := range listen {
		ap, err := netip.ParseAddrPort(l)
		if err != nil {
			return Config{}, fmt.Errorf("--listen %q: want ADDR:PORT", l)
		}
		if !slices.Contains(listenPorts, ap.Port()) {
			listenPorts = append(listenPorts, ap.Port())
		}
		if len(f.LocalIPs) == 0 && !slices.Contains(c.Addresses, ap.Addr().Unmap()) {
			c.Addresses = append(c.Addresses, ap.Addr().Unmap())
		}
	}
	for _, s := range f.LocalIPs {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return Config{}, fmt.Errorf("--local-ip %q: want an IP address", s)
		}
		c.Addresses = append(c.Addresses, a)
	}
	c.Ports = listenPorts
	for _, e := range endpoints {
		if e == "" {
			continue
		}
		ap, err := netip.ParseAddrPort(e)
		if err != nil || !slices.Contains(c.Addresses, ap.Addr().Unmap()) || slices.Contains(c.Ports, ap.Port()) {
			continue
		}
		c.Ports = append(c.Ports, ap.Port())
	}
	if _, err := c.withDefaults(); err != nil {
		if len(f.LocalIPs) > 0 {
			return Config{}, fmt.Errorf("--local-ip: %w", err)
		}
		return Config{}, fmt.Errorf("--setup-interface with --listen %v: %w", listen, err)
	}
	return c, nil
}
