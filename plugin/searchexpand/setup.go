package searchexpand

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

const defaultClusterDomain = "cluster.local"

// trustNone is the trusted argument that accepts the option from no client.
const trustNone = "none"

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	cfg, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	s := cfg.SearchExpand
	if cfg.cacheSize > 0 {
		s.cache = newAnswerCache(cfg.cacheSize, cfg.cacheMaxTTL)
	}
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		s.Next = next
		return s
	})
	return nil
}

// config is a parsed searchexpand block: the handler's settings and the
// answer cache's.
type config struct {
	*SearchExpand
	cacheSize   int // 0: no answer cache
	cacheMaxTTL time.Duration
}

// maxCacheSize bounds cache_size so that a typo cannot reserve memory for
// billions of entries: far more than distinct names times search lists in
// any cluster.
const maxCacheSize = 10_000_000

func parse(c *caddy.Controller) (*config, error) {
	s := &SearchExpand{ClusterDomain: defaultClusterDomain, Code: searchpath.DefaultOptionCode, MaxForwarded: DefaultMaxForwarded}
	cfg := &config{SearchExpand: s, cacheSize: DefaultCacheSize, cacheMaxTTL: DefaultCacheMaxTTL}
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
				// "none": a cluster DNS without a node cache in front,
				// where no client has a reason to send the option. Mixed
				// with prefixes it would be ambiguous.
				if slices.Contains(args, trustNone) {
					if len(args) > 1 || len(s.Trusted) > 0 {
						return nil, errors.New("trusted: none cannot be combined with prefixes")
					}
					s.TrustNone = true
					continue
				}
				if s.TrustNone {
					return nil, errors.New("trusted: none cannot be combined with prefixes")
				}
				for _, a := range args {
					p, err := prefix(a)
					if err != nil {
						return nil, fmt.Errorf("trusted: %w", err)
					}
					s.Trusted = append(s.Trusted, p)
				}
			case "max_forwarded":
				args := c.RemainingArgs()
				if len(args) != 1 {
					return nil, c.ArgErr()
				}
				n, err := strconv.Atoi(args[0])
				// More than MaxEntries can never cut: the option holds no
				// more. 0 would never try a host search domain; trusted none
				// says that more plainly.
				if err != nil || n < 1 || n > searchpath.MaxEntries {
					return nil, fmt.Errorf("max_forwarded %q: want a number of search domains, 1-%d", args[0], searchpath.MaxEntries)
				}
				s.MaxForwarded = n
			case "host_search":
				args := c.RemainingArgs()
				if len(args) == 0 {
					return nil, c.ArgErr()
				}
				if len(s.HostSearch)+len(args) > searchpath.MaxEntries {
					return nil, fmt.Errorf("host_search: at most %d domains", searchpath.MaxEntries)
				}
				for _, a := range args {
					d, err := searchpath.NormalizeDomain(a)
					if err != nil {
						return nil, fmt.Errorf("host_search: %w", err)
					}
					s.HostSearch = append(s.HostSearch, d)
				}
			case "cache_size":
				args := c.RemainingArgs()
				if len(args) != 1 {
					return nil, c.ArgErr()
				}
				n, err := strconv.Atoi(args[0])
				if err != nil || n < 0 || n > maxCacheSize {
					return nil, fmt.Errorf("cache_size %q: want a number of entries, 0-%d (0 disables the answer cache)", args[0], maxCacheSize)
				}
				cfg.cacheSize = n
			case "cache_max_ttl":
				args := c.RemainingArgs()
				if len(args) != 1 {
					return nil, c.ArgErr()
				}
				d, err := parseTTL(args[0])
				if err != nil {
					return nil, fmt.Errorf("cache_max_ttl %q: %w", args[0], err)
				}
				cfg.cacheMaxTTL = d
			default:
				return nil, c.Errf("unknown property %q", c.Val())
			}
		}
	}
	return cfg, nil
}

// parseTTL parses a TTL cap: seconds, as the cache plugin's TTL arguments,
// or a Go duration (30s, 5m) in whole seconds, 1 s to 1 day.
func parseTTL(arg string) (time.Duration, error) {
	d, err := time.ParseDuration(arg)
	if err != nil {
		n, nerr := strconv.Atoi(arg)
		if nerr != nil {
			return 0, errors.New("want seconds or a duration such as 30s")
		}
		d = time.Duration(n) * time.Second
	}
	if d < time.Second || d > 24*time.Hour || d%time.Second != 0 {
		return 0, errors.New("want whole seconds, 1s-24h")
	}
	return d, nil
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
