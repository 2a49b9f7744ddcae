package warmstack

import (
	"runtime"
	"strconv"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
)

func init() { plugin.Register(pluginName, setup) }

var log = clog.NewWithPlugin(pluginName)

// chooserKey keys the Corefile's chooser in caddy's per-instance storage.
type chooserKey struct{}

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
	// One chooser for all the Corefile's server blocks: it measures the
	// process's CPU time, which they share.
	ch, _ := c.Get(chooserKey{}).(*chooser)
	if ch == nil {
		ch = newChooser()
		ch.decided = func(handOff bool, inPlace, handedOff time.Duration) {
			log.Debugf("CPU time of the sample's queries: %v in place, %v handed off; handing off: %v", inPlace, handedOff, handOff)
		}
		c.Set(chooserKey{}, ch)
	}
	cfg := dnsserver.GetConfig(c)
	cfg.AddPlugin(func(next plugin.Handler) plugin.Handler { return wrap(cfg, next, workers, ch) })
	return nil
}

// wrap puts warmstack in front of next, unless the chain is lean. The
// chain is built from its end, so the handlers cfg has registered so far
// are the ones after warmstack, which comes first.
func wrap(cfg interface{ Handlers() []plugin.Handler }, next plugin.Handler, workers int, ch *chooser) plugin.Handler {
	if n := len(cfg.Handlers()); next != nil && n <= LeanChain {
		log.Debugf("%d plugins after warmstack: leaving it out of the chain", n)
		return next
	}
	s := New(next, workers)
	s.choose = ch
	return s
}
