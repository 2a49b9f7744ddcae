package warmstack

import (
	"runtime"
	"strconv"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	workers := max(MinWorkers, DefaultWorkers*runtime.GOMAXPROCS(0))
	seen := false
	for c.Next() {
		if seen {
			return plugin.Error(pluginName, c.Err("specified more than once"))
		}
		seen = true
		args := c.RemainingArgs()
		switch len(args) {
		case 0:
		case 1:
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 || n > MaxWorkers {
				return plugin.Error(pluginName, c.Errf("workers %q: want 1-%d", args[0], MaxWorkers))
			}
			workers = n
		default:
			return plugin.Error(pluginName, c.ArgErr())
		}
	}
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		return New(next, workers)
	})
	return nil
}
