package corefile

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// ClusterDNSOptions describe the cluster DNS `dnsplane up` runs: the
// kubernetes plugin for the cluster domain and reverse zones, searchexpand
// for autopath names, and forward for everything else.
type ClusterDNSOptions struct {
	// Listen is the ADDR:PORT the cluster DNS serves on (UDP and TCP).
	Listen string
	// ClusterDomain defaults to cluster.local.
	ClusterDomain string
	// OptionCode is the EDNS0 search list option code; 0 means 65534.
	OptionCode uint16
	// Kubeconfig is the kubeconfig the kubernetes plugin reads the API
	// with (its current context).
	Kubeconfig string
	// Upstreams are ADDR[:PORT] resolvers for names outside the cluster.
	Upstreams []string
	// Trusted are the prefixes the search list option is accepted from;
	// empty accepts it from any client, and TrustNone alone from none.
	// NodeCacheTrusted gives what `dnsplane up` uses.
	Trusted []string
	// CacheTTL is the cache's maximum TTL in seconds; 0 means 30.
	CacheTTL int
	// Health, Ready and Metrics are ADDR:PORT for the health, ready and
	// prometheus endpoints; empty leaves the endpoint out.
	Health, Ready, Metrics string
	// Log adds the log plugin (every query logged).
	Log bool
}

// ClusterDNS renders the cluster DNS Corefile for o.
//
// The loop plugin is left out on purpose: it exits the process when it
// detects a forwarding loop, and in `dnsplane up` that process is also the
// API server. Callers check their upstreams instead.
func ClusterDNS(o ClusterDNSOptions) (string, error) {
	c, err := clusterDNSModel(o)
	if err != nil {
		return "", err
	}
	return c.Render()
}

// clusterDNSModel validates o and builds the cluster DNS Corefile.
func clusterDNSModel(o ClusterDNSOptions) (Corefile, error) {
	cd, code, ttl, err := common(o.ClusterDomain, o.OptionCode, o.CacheTTL)
	if err != nil {
		return Corefile{}, err
	}
	listen, err := netip.ParseAddrPort(o.Listen)
	if err != nil {
		return Corefile{}, fmt.Errorf("listen address %q: want ADDR:PORT", o.Listen)
	}
	if o.Kubeconfig == "" {
		return Corefile{}, errors.New("no kubeconfig")
	}
	if err := CheckToken(o.Kubeconfig); err != nil {
		return Corefile{}, fmt.Errorf("kubeconfig path %w", err)
	}
	upstreams, err := upstreamAddrs(o.Upstreams)
	if err != nil {
		return Corefile{}, err
	}
	var trusted []string
	for _, t := range o.Trusted {
		if t == TrustNone {
			if len(o.Trusted) > 1 {
				return Corefile{}, fmt.Errorf("trusted %q cannot be combined with prefixes", TrustNone)
			}
			trusted = append(trusted, TrustNone)
			continue
		}
		p, err := netip.ParsePrefix(t)
		if err != nil {
			a, aerr := netip.ParseAddr(t)
			if aerr != nil {
				return Corefile{}, fmt.Errorf("trusted prefix %q: want CIDR or address", t)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		trusted = append(trusted, p.String())
	}
	if err := checkEndpoints(o.Health, o.Ready, o.Metrics); err != nil {
		return Corefile{}, err
	}

	ps := []Plugin{{Name: "errors"}}
	if o.Log {
		ps = append(ps, Plugin{Name: "log"})
	}
	ps = append(ps, Plugin{Name: "bind", Args: []string{listen.Addr().String()}})
	if o.Health != "" {
		// lameduck keeps answering while a stopping replica leaves the
		// Service's endpoints (coredns#5409).
		ps = append(ps, Plugin{Name: "health", Args: []string{o.Health}, Block: []Directive{{Name: "lameduck", Args: []string{"5s"}}}})
	}
	if o.Ready != "" {
		ps = append(ps, Plugin{Name: "ready", Args: []string{o.Ready}})
	}
	if o.Metrics != "" {
		ps = append(ps, Plugin{Name: "prometheus", Args: []string{o.Metrics}})
	}
	expand := Plugin{Name: "searchexpand", Args: []string{cd}, Block: []Directive{{Name: "code", Args: []string{strconv.Itoa(int(code))}}}}
	if len(trusted) > 0 {
		expand.Block = append(expand.Block, Directive{Name: "trusted", Args: trusted})
	}
	ps = append(ps, expand,
		Plugin{Name: "kubernetes", Args: []string{cd, "in-addr.arpa", "ip6.arpa"}, Block: []Directive{
			{Name: "kubeconfig", Args: []string{o.Kubeconfig}},
			{Name: "pods", Args: []string{"insecure"}},
			{Name: "fallthrough", Args: []string{"in-addr.arpa", "ip6.arpa"}},
		}},
		// The node cache reaches the cluster DNS over TCP, and forward
		// would otherwise use the client's protocol upstream too: TCP
		// handshakes to cloud resolvers are slow and throttled
		// (kubernetes#111975).
		Plugin{Name: "forward", Args: append([]string{"."}, upstreams...), Block: []Directive{{Name: "prefer_udp"}}},
		Plugin{Name: "cache", Args: []string{strconv.Itoa(ttl)}},
	)
	return Corefile{Servers: []Server{{
		Zones:   []string{".:" + strconv.Itoa(int(listen.Port()))},
		Plugins: ps,
	}}}, nil
}

// common applies the defaults both Corefiles share and checks the cluster
// domain.
func common(clusterDomain string, code uint16, ttl int) (string, uint16, int, error) {
	cd := strings.ToLower(strings.Trim(clusterDomain, "."))
	if cd == "" {
		cd = "cluster.local"
	}
	if err := CheckToken(cd); err != nil {
		return "", 0, 0, fmt.Errorf("cluster domain %w", err)
	}
	if code == 0 {
		code = defaultOptionCode
	}
	if ttl == 0 {
		ttl = 30
	}
	return cd, code, ttl, nil
}

// upstreamAddrs normalises the upstream resolvers both Corefiles forward to.
func upstreamAddrs(upstreams []string) ([]string, error) {
	if len(upstreams) == 0 {
		return nil, errors.New("no upstream resolver")
	}
	out := make([]string, 0, len(upstreams))
	for _, u := range upstreams {
		a, err := UpstreamAddr(u)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// checkEndpoints checks the health, ready and metrics addresses; empty
// ones are left out of the Corefile.
func checkEndpoints(health, ready, metrics string) error {
	for _, e := range []struct{ name, v string }{{"health", health}, {"ready", ready}, {"metrics", metrics}} {
		if e.v == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(e.v); err != nil {
			return fmt.Errorf("%s address %q: want [ADDR]:PORT", e.name, e.v)
		}
		if err := CheckToken(e.v); err != nil {
			return fmt.Errorf("%s address %w", e.name, err)
		}
	}
	return nil
}

// TrustNone as the only ClusterDNSOptions.Trusted entry accepts the
// search list option from no client (searchexpand's `trusted none`).
const TrustNone = "none"

// NodeCacheTrusted returns ClusterDNSOptions.Trusted for a cluster DNS on
// clusterDNS (ADDR:PORT) whose only legitimate sender of the search list
// option is a node cache on this machine forwarding to that address, as in
// `dnsplane up`: the address that node cache sends from, or TrustNone when
// there is no node cache (nodeCache false), since then nobody has a reason
// to send the option. Any other client that sends one gets the derived
// list instead of choosing the search list, and with it the upstream
// queries, itself.
//
// The address is not the node cache's listen address: forward (without
// source_address) lets the kernel pick the source for the route to the
// cluster DNS. For a loopback cluster DNS that is 127.0.0.1 (or ::1)
// whatever loopback address the node cache listens on, so local processes
// that query the cluster DNS from that address are trusted too; clients on
// other addresses are not.
func NodeCacheTrusted(clusterDNS string, nodeCache bool) ([]string, error) {
	if !nodeCache {
		return []string{TrustNone}, nil
	}
	src, err := ForwardSource(clusterDNS)
	if err != nil {
		return nil, err
	}
	return []string{src.String()}, nil
}

// ForwardSource returns the source address the kernel picks for packets to
// addr (ADDR:PORT), which is the one CoreDNS's forward plugin sends from
// when source_address is not set (it dials with no local address). It
// connects a UDP socket, which looks up the route and sends nothing.
func ForwardSource(addr string) (netip.Addr, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("address %q: want ADDR:PORT", addr)
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ap))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("source address towards %s: %w", addr, err)
	}
	defer c.Close()
	local, ok := c.LocalAddr().(*net.UDPAddr)
	if !ok {
		return netip.Addr{}, fmt.Errorf("source address towards %s: local address %v", addr, c.LocalAddr())
	}
	return local.AddrPort().Addr().Unmap(), nil
}
