package loopguard

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	g, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	// A new ID per instance and per load: it is never configured, so no
	// two servers share one by mistake, and an ID seen upstream is
	// useless after the next reload.
	rand.Read(g.ID[:])
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		g.Next = next
		return g
	})
	return nil
}

func parse(c *caddy.Controller) (*LoopGuard, error) {
	g := &LoopGuard{Code: DefaultCode, MaxHops: DefaultMaxHops}
	seen := false
	for c.Next() {
		if seen {
			return nil, errors.New("specified more than once")
		}
		seen = true
		if len(c.RemainingArgs()) > 0 {
			return nil, c.ArgErr()
		}
		for c.NextBlock() {
			prop := c.Val()
			args := c.RemainingArgs()
			if len(args) != 1 {
				return nil, c.ArgErr()
			}
			switch prop {
			case "code":
				code, err := searchpath.ParseOptionCode(args[0])
				if err != nil {
					return nil, err
				}
				if code == searchpath.DefaultOptionCode {
					return nil, fmt.Errorf("code %d is the autopath search list option's (searchopt, searchexpand)", code)
				}
				g.Code = code
			case "max_hops":
				n, err := strconv.Atoi(args[0])
				if err != nil || n < 1 || n > MaxMaxHops {
					return nil, fmt.Errorf("max_hops %q: want 1-%d", args[0], MaxMaxHops)
				}
				g.MaxHops = n
			default:
				return nil, c.Errf("unknown property %q", prop)
			}
		}
	}
	return g, nil
}
