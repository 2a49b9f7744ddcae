package dnsserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
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

// ClusterDNSCorefile renders the cluster DNS Corefile for o.
//
// The loop plugin is left out on purpose: it exits the process when it
// detects a forwarding loop, and in `dnsplane up` that process is also the
// API server. Callers check their upstreams instead.
func ClusterDNSCorefile(o ClusterDNSOptions) (string, error) {
	cd := strings.ToLower(strings.Trim(o.ClusterDomain, "."))
	if cd == "" {
		cd = "cluster.local"
	}
	if strings.ContainsAny(cd, corefileMeta) {
		return "", fmt.Errorf("cluster domain %q contains a Corefile metacharacter", o.ClusterDomain)
	}
	code := o.OptionCode
	if code == 0 {
		code = defaultOptionCode
	}
	ttl := o.CacheTTL
	if ttl == 0 {
		ttl = 30
	}
	listen, err := netip.ParseAddrPort(o.Listen)
	if err != nil {
		return "", fmt.Errorf("listen address %q: want ADDR:PORT", o.Listen)
	}
	if o.Kubeconfig == "" {
		return "", errors.New("no kubeconfig")
	}
	if strings.ContainsAny(o.Kubeconfig, corefileMeta) {
		return "", fmt.Errorf("kubeconfig path %q contains whitespace or a Corefile metacharacter", o.Kubeconfig)
	}
	if len(o.Upstreams) == 0 {
		return "", errors.New("no upstream resolver")
	}
	var upstreams []string
	for _, u := range o.Upstreams {
		a, err := UpstreamAddr(u)
		if err != nil {
			return "", err
		}
		upstreams = append(upstreams, a)
	}
	var trusted []string
	for _, t := range o.Trusted {
		if t == TrustNone {
			if len(o.Trusted) > 1 {
				return "", fmt.Errorf("trusted %q cannot be combined with prefixes", TrustNone)
			}
			trusted = append(trusted, TrustNone)
			continue
		}
		p, err := netip.ParsePrefix(t)
		if err != nil {
			a, aerr := netip.ParseAddr(t)
			if aerr != nil {
				return "", fmt.Errorf("trusted prefix %q: want CIDR or address", t)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		trusted = append(trusted, p.String())
	}
	for _, e := range []struct{ name, v string }{{"health", o.Health}, {"ready", o.Ready}, {"metrics", o.Metrics}} {
		if e.v == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(e.v); err != nil {
			return "", fmt.Errorf("%s address %q: want [ADDR]:PORT", e.name, e.v)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, ".:%d {\n    errors\n", listen.Port())
	if o.Log {
		b.WriteString("    log\n")
	}
	fmt.Fprintf(&b, "    bind %s\n", listen.Addr())
	if o.Health != "" {
		// lameduck keeps answering while a stopping replica leaves the
		// Service's endpoints (coredns#5409).
		fmt.Fprintf(&b, "    health %s {\n        lameduck 5s\n    }\n", o.Health)
	}
	if o.Ready != "" {
		fmt.Fprintf(&b, "    ready %s\n", o.Ready)
	}
	if o.Metrics != "" {
		fmt.Fprintf(&b, "    prometheus %s\n", o.Metrics)
	}
	fmt.Fprintf(&b, "    searchexpand %s {\n        code %d\n", cd, code)
	if len(trusted) > 0 {
		fmt.Fprintf(&b, "        trusted %s\n", strings.Join(trusted, " "))
	}
	b.WriteString("    }\n")
	fmt.Fprintf(&b, "    kubernetes %s in-addr.arpa ip6.arpa {\n", cd)
	fmt.Fprintf(&b, "        kubeconfig %s\n", o.Kubeconfig)
	b.WriteString("        pods insecure\n        fallthrough in-addr.arpa ip6.arpa\n    }\n")
	// The node cache reaches the cluster DNS over TCP, and forward would
	// otherwise use the client's protocol upstream too: TCP handshakes to
	// cloud resolvers are slow and throttled (kubernetes#111975).
	fmt.Fprintf(&b, "    forward . %s {\n        prefer_udp\n    }\n", strings.Join(upstreams, " "))
	fmt.Fprintf(&b, "    cache %d\n}\n", ttl)
	return b.String(), nil
}

// TrustNone, as the only ClusterDNSOptions.Trusted entry, accepts the
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

// corefileMeta are the characters a value spliced into a Corefile line must
// not contain: they would end the token, the line or the block.
const corefileMeta = " \t\r\n{}\"#;"
