package searchopt

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/dnsplane/dnsplane/plugin/pkg/hostresolv"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// defaultResolvConf is where the host search list is read from when neither
// host_search nor resolv_conf is given (a variable so tests can point it
// elsewhere).
var defaultResolvConf = "/etc/resolv.conf"

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

func parse(c *caddy.Controller) (*SearchOpt, error) {
	s := &SearchOpt{ClusterDomain: defaultClusterDomain, Code: searchpath.DefaultOptionCode}
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

		var hostSearch []string
		hostSearchSet := false
		resolvConf, resolvConfSet := defaultResolvConf, false
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
			case "host_search":
				args := c.RemainingArgs()
				if len(args) == 0 {
					return nil, c.ArgErr()
				}
				for _, a := range args {
					d, err := searchpath.NormalizeDomain(a)
					if err != nil {
						return nil, fmt.Errorf("host_search: %w", err)
					}
					hostSearch = append(hostSearch, d)
				}
				hostSearchSet = true
			case "resolv_conf":
				args := c.RemainingArgs()
				if len(args) != 1 {
					return nil, c.ArgErr()
				}
				resolvConf, resolvConfSet = args[0], true
			default:
				return nil, c.Errf("unknown property %q", c.Val())
			}
		}

		if !hostSearchSet {
			list, err := readSearch(resolvConf)
			// The default file may be absent (e.g. in a minimal container):
			// then there is no host search list. A named file must exist.
			if err != nil && (resolvConfSet || !errors.Is(err, fs.ErrNotExist)) {
				return nil, fmt.Errorf("resolv_conf: %w", err)
			}
			hostSearch = list
		}
		s.HostSearch = hostSearch
	}
	return s, nil
}

// readSearch returns the search list of a resolv.conf file as kubelet reads
// it (plugin/pkg/hostresolv: the last search line wins, trailing dots are
// trimmed, "." is dropped), normalised; entries that could not travel in the
// option are skipped.
func readSearch(path string) ([]string, error) {
	conf, err := hostresolv.ParseFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range conf.Searches {
		if d, err := searchpath.NormalizeDomain(s); err == nil {
			out = append(out, d)
		}
	}
	return out, nil
}
