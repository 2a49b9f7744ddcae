package dnsserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/dnsplane/dnsplane/internal/resolvconf"
)

// NodeCacheOptions describe a node cache Corefile.
type NodeCacheOptions struct {
	// Listen are ADDR:PORT pairs the cache serves on.
	Listen []string
	// ClusterDNS are ADDR:PORT pairs of the cluster DNS; the cluster domain
	// and ap.k8s.io. are forwarded there over TCP.
	ClusterDNS []string
	// ClusterDomain defaults to cluster.local.
	ClusterDomain string
	// OptionCode is the EDNS0 search list option code; 0 means 65534.
	OptionCode uint16
	// Upstreams are ADDR[:PORT] resolvers for every other name.
	Upstreams []string
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

// UpstreamsFromResolvConf returns the nameservers of a resolv.conf file (the
// node's upstream resolvers) and its search list.
func UpstreamsFromResolvConf(path string) (nameservers, search []string, err error) {
	c, err := resolvconf.ParseFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(c.Nameservers) == 0 {
		return nil, nil, fmt.Errorf("%s: no nameserver lines", path)
	}
	return c.Nameservers, c.Searches, nil
}

// NodeCacheCorefile renders the node cache's Corefile: one server block per
// listen port for the cluster domain and ap.k8s.io (searchopt tags autopath
// names, cache, forward to cluster DNS with force_tcp) and one for the rest
// (searchopt strips client-sent options, cache, forward to the upstreams).
func NodeCacheCorefile(o NodeCacheOptions) (string, error) {
	cd := strings.ToLower(strings.Trim(o.ClusterDomain, "."))
	if cd == "" {
		cd = "cluster.local"
	}
	code := o.OptionCode
	if code == 0 {
		code = defaultOptionCode
	}
	ttl := o.CacheTTL
	if ttl == 0 {
		ttl = 30
	}
	if len(o.Listen) == 0 {
		return "", errors.New("no listen address")
	}
	if len(o.ClusterDNS) == 0 {
		return "", errors.New("no cluster DNS address")
	}
	if len(o.Upstreams) == 0 {
		return "", errors.New("no upstream resolver")
	}
	// Group the listen addresses by port: one server block set per port,
	// bound to that port's addresses.
	var ports []string
	binds := map[string][]string{}
	for _, l := range o.Listen {
		ap, err := netip.ParseAddrPort(l)
		if err != nil {
			return "", fmt.Errorf("listen address %q: want ADDR:PORT", l)
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
			return "", fmt.Errorf("cluster DNS address %q: want ADDR:PORT", c)
		}
		clusterDNS = append(clusterDNS, ap.String())
	}
	var upstreams []string
	for _, u := range o.Upstreams {
		a, err := UpstreamAddr(u)
		if err != nil {
			return "", err
		}
		upstreams = append(upstreams, a)
	}
	for _, e := range []struct{ name, v string }{{"health", o.Health}, {"ready", o.Ready}, {"metrics", o.Metrics}} {
		if e.v == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(e.v); err != nil {
			return "", fmt.Errorf("%s address %q: want [ADDR]:PORT", e.name, e.v)
		}
	}
	for _, d := range o.HostSearch {
		if strings.ContainsAny(d, corefileMeta) {
			return "", fmt.Errorf("host search domain %q contains a Corefile metacharacter", d)
		}
	}

	var b strings.Builder
	searchopt := func() {
		fmt.Fprintf(&b, "    searchopt %s {\n        code %d\n", cd, code)
		if len(o.HostSearch) > 0 {
			fmt.Fprintf(&b, "        host_search %s\n", strings.Join(o.HostSearch, " "))
		} else {
			// No host search list: an empty file, so that searchopt does
			// not fall back to /etc/resolv.conf.
			b.WriteString("        resolv_conf /dev/null\n")
		}
		b.WriteString("    }\n")
	}
	common := func(port string, first bool) {
		b.WriteString("    errors\n")
		if o.Log {
			b.WriteString("    log\n")
		}
		fmt.Fprintf(&b, "    bind %s\n", strings.Join(binds[port], " "))
		if first {
			if o.Health != "" {
				fmt.Fprintf(&b, "    health %s\n", o.Health)
			}
			if o.Ready != "" {
				fmt.Fprintf(&b, "    ready %s\n", o.Ready)
			}
		}
		if o.Metrics != "" {
			fmt.Fprintf(&b, "    prometheus %s\n", o.Metrics)
		}
		searchopt()
		if !o.NoCache {
			fmt.Fprintf(&b, "    cache %d\n", ttl)
		}
	}
	for i, p := range ports {
		if i > 0 {
			b.WriteString("\n")
		}
		// Reverse zones go to the cluster DNS too, as NodeLocal DNSCache
		// does: its kubernetes plugin answers PTR for Service and pod IPs
		// and falls through to its own upstreams for the rest.
		fmt.Fprintf(&b, "%s:%s ap.k8s.io:%s in-addr.arpa:%s ip6.arpa:%s {\n", cd, p, p, p, p)
		common(p, i == 0)
		fmt.Fprintf(&b, "    forward . %s {\n        force_tcp\n    }\n}\n\n", strings.Join(clusterDNS, " "))
		fmt.Fprintf(&b, ".:%s {\n", p)
		common(p, false)
		fmt.Fprintf(&b, "    forward . %s\n}\n", strings.Join(upstreams, " "))
	}
	return b.String(), nil
}

// UpstreamAddr normalises an upstream resolver given as ADDR or ADDR:PORT
// to ADDR:PORT (port 53 by default).
func UpstreamAddr(s string) (string, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.String(), nil
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil || a.Zone() != "" {
		return "", fmt.Errorf("upstream %q: want ADDR[:PORT]", s)
	}
	return netip.AddrPortFrom(a, 53).String(), nil
}
