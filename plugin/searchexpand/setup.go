package searchexpand

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

const defaultClusterDomain = "cluster.local"

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	s, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		s.Next = next
		return s
	})
	return nil
}

func parse(c *caddy.Controller) (*SearchExpand, error) {
	s := &SearchExpand{ClusterDomain: defaultClusterDomain, Code: searchpath.DefaultOptionCode}
	seen := false
	for c.Next() {
		if seen {
			return nil, errors.New("specified more than once")
		}
		seen = true

		args := c.RemainingArgs()
		switch len(args) {
		case 0:
		case 1:
			cd, err := searchpath.NormalizeDomain(args[0])
			if err != nil {
				return nil, fmt.Errorf("cluster domain: %w", err)
			}
			s.ClusterDomain = cd
		default:
			return nil, c.ArgErr()
		}

		for c.NextBlock() {
			switch c.Val() {
			case "code":
				args := c.RemainingArgs()
				if len(args) != 1 {
					return nil, c.ArgErr()
				}
				code, err := searchpath.ParseOptionCode(args[0])
				if err != nil {
					return nil, err
				}
				s.Code = code
			case "trusted":
				args := c.RemainingArgs()
				if len(args) == 0 {
					return nil, c.ArgErr()
				}
				for _, a := range args {
					p, err := prefix(a)
					if err != nil {
						return nil, fmt.Errorf("trusted: %w", err)
					}
					s.Trusted = append(s.Trusted, p)
				}
			default:
				return nil, c.Errf("unknown property %q", c.Val())
			}
		}
	}
	return s, nil
}

// prefix parses a CIDR, or a single address as a host prefix.
func prefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}
