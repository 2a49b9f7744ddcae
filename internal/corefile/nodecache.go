package corefile

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// NodeCacheOptions describe a node cache Corefile.
type NodeCacheOptions struct {
	// Listen are ADDR:PORT pairs the cache serves on.
	Listen []string
	// ClusterDNS are ADDR:PORT pairs of the cluster DNS. Every name the
	// cache does not hold is forwarded there: the cluster domain,
	// ap.k8s.io. and the reverse zones over TCP, the rest over UDP.
	ClusterDNS []string
	// ClusterDomain defaults to cluster.local.
	ClusterDomain string
	// OptionCode is the EDNS0 search list option code; 0 means 65534.
	OptionCode uint16
	// HostSearch is the node's host search list appended to the option.
	HostSearch []string
	// CacheTTL is the cache's maximum TTL in seconds; 0 means 30.
	CacheTTL int
	// NoCache leaves the cache plugin out, so every query is forwarded
	// (for benchmarks that measure the whole path).
	NoCache bool
	// Health, Ready and Metrics are ADDR:PORT for the health, ready and
	// prometheus endpoints; empty leaves the endpoint out.
	Health, Ready, Metrics string
	// Log adds the log plugin (every query logged).
	Log bool
}

// defaultOptionCode is searchpath.DefaultOptionCode.
const defaultOptionCode = 65534

// NodeCache renders the node cache's Corefile: one server block per
// listen port for the cluster domain, ap.k8s.io and the reverse zones
// (searchopt tags autopath names, cache, forward to the cluster DNS with
// force_tcp) and one for the rest (searchopt strips client-sent options,
// cache, forward to the cluster DNS over UDP). Every miss goes to the
// cluster DNS, the one place the DNS configuration lives (its stub
// domains and upstream resolvers: docs/autopath.md, "Who forwards what").
func NodeCache(o NodeCacheOptions) (string, error) {
	c, err := nodeCacheModel(o)
	if err != nil {
		return "", err
	}
	return c.Render()
}

// nodeCacheModel validates o and builds the node cache Corefile.
func nodeCacheModel(o NodeCacheOptions) (Corefile, error) {
	cd, code, ttl, err := common(o.ClusterDomain, o.OptionCode, o.CacheTTL)
	if err != nil {
		return Corefile{}, err
	}
	if len(o.Listen) == 0 {
		return Corefile{}, errors.New("no listen address")
	}
	if len(o.ClusterDNS) == 0 {
		return Corefile{}, errors.New("no cluster DNS address")
	}
	// Group the listen addresses by port: one server block set per port,
	// bound to that port's addresses.
	var ports []string
	binds := map[string][]string{}
	for _, l := range o.Listen {
		ap, err := netip.ParseAddrPort(l)
		if err != nil {
			return Corefile{}, fmt.Errorf("listen address %q: want ADDR:PORT", l)
		}
		p := strconv.Itoa(int(ap.Port()))
		if _, ok := binds[p]; !ok {
			ports = append(ports, p)
		}
		if a := ap.Addr().String(); !slices.Contains(binds[p], a) {
			binds[p] = append(binds[p], a)
		}
	}
	var clusterDNS []string
	for _, c := range o.ClusterDNS {
		ap, err := netip.ParseAddrPort(c)
		if err != nil {
			return Corefile{}, fmt.Errorf("cluster DNS address %q: want ADDR:PORT", c)
		}
		clusterDNS = append(clusterDNS, ap.String())
	}
	if err := checkEndpoints(o.Health, o.Ready, o.Metrics); err != nil {
		return Corefile{}, err
	}
	for _, d := range o.HostSearch {
		if err := CheckToken(d); err != nil {
			return Corefile{}, fmt.Errorf("host search domain %w", err)
		}
	}

	searchopt := Plugin{Name: "searchopt", Args: []string{cd}, Block: []Directive{{Name: "code", Args: []string{strconv.Itoa(int(code))}}}}
	if len(o.HostSearch) > 0 {
		searchopt.Block = append(searchopt.Block, Directive{Name: "host_search", Args: o.HostSearch})
	} else {
		// No host search list: an empty file, so that searchopt does not
		// fall back to /etc/resolv.conf.
		searchopt.Block = append(searchopt.Block, Directive{Name: "resolv_conf", Args: []string{"/dev/null"}})
	}
	// common are the plugins both blocks of a port share; the health and
	// ready endpoints go in the first block only (each binds its own
	// address once per process).
	common := func(port string, first bool) []Plugin {
		ps := []Plugin{{Name: "errors"}}
		if o.Log {
			ps = append(ps, Plugin{Name: "log"})
		}
		ps = append(ps, Plugin{Name: "bind", Args: binds[port]}, loopguardPlugin(code), warmstackPlugin)
		if first && o.Health != "" {
			ps = append(ps, Plugin{Name: "health", Args: []string{o.Health}})
		}
		if first && o.Ready != "" {
			ps = append(ps, Plugin{Name: "ready", Args: []string{o.Ready}})
		}
		if o.Metrics != "" {
			ps = append(ps, Plugin{Name: "prometheus", Args: []string{o.Metrics}})
		}
		ps = append(ps, searchopt)
		if !o.NoCache {
			ps = append(ps, Plugin{Name: "cache", Args: []string{strconv.Itoa(ttl)}})
		}
		return ps
	}
	var c Corefile
	for i, p := range ports {
		c.Servers = append(c.Servers,
			// Reverse zones go to the cluster DNS too, as NodeLocal
			// DNSCache does: its kubernetes plugin answers PTR for Service
			// and pod IPs and falls through to its own upstreams for the
			// rest.
			Server{
				Zones: []string{cd + ":" + p, "ap.k8s.io:" + p, "in-addr.arpa:" + p, "ip6.arpa:" + p},
				Plugins: append(common(p, i == 0),
					Plugin{Name: "forward", Args: append([]string{"."}, clusterDNS...), Block: []Directive{{Name: "force_tcp"}, maxConcurrent}}),
			},
			// Every other name goes to the cluster DNS too, not to the
			// node's resolvers: its Corefile has the DNS resource's
			// forward plugins and upstream resolvers, which a second copy
			// here would miss or drift from (NodeLocal DNSCache copies
			// only kube-dns's ConfigMap). UDP, as the cluster DNS's own
			// forward sends, a truncated answer retried over TCP: TCP
			// per external name costs latency (kubernetes#111975).
			Server{
				Zones: []string{".:" + p},
				Plugins: append(common(p, false),
					Plugin{Name: "forward", Args: append([]string{"."}, clusterDNS...), Block: []Directive{{Name: "prefer_udp"}, maxConcurrent}}),
			},
		)
	}
	return c, nil
}

// UpstreamAddr normalises an upstream resolver given as ADDR or ADDR:PORT
// to ADDR:PORT (port 53 by default).
func UpstreamAddr(s string) (string, error) {
	return upstreamAddr(s, 53)
}

// upstreamAddr normalises ADDR or ADDR:PORT to ADDR:PORT, with port when
// s names none. IPv6 addresses come out bracketed and in canonical form.
func upstreamAddr(s string, port uint16) (string, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.String(), nil
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil || a.Zone() != "" {
		return "", fmt.Errorf("upstream %q: want ADDR[:PORT]", s)
	}
	return netip.AddrPortFrom(a, port).String(), nil
}
