// Command dnsupstream is a tiny authoritative DNS server for benchmarks: it
// stands in for the upstream resolvers a cluster DNS or node cache forwards
// to. It serves UDP and TCP on one address (127.0.0.1 by default), answers
// A queries for the names given with -a, NODATA for other types of those
// names and for their ancestors inside a zone, and NXDOMAIN for everything
// else. Replies can be delayed (-delay) to emulate a resolver further away.
//
//	dnsupstream -zone example.com,corp.example -a example.com=93.184.216.34 -a intranet.corp.example=10.9.9.9 -delay 10ms
//
// It prints "listening on ADDR:PORT" once both sockets serve, and runs until
// SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// listFlag is a repeatable, comma-separated string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

type server struct {
	zones   []string          // FQDNs, lower case
	records map[string]net.IP // FQDN, lower case -> IPv4
	delay   time.Duration
	ttl     uint32
	queries atomic.Int64
}

// zoneOf returns the longest zone name is in, or "".
func (s *server) zoneOf(name string) string {
	best := ""
	for _, z := range s.zones {
		if dns.IsSubDomain(z, name) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

// exists reports whether name has records or is an ancestor of a name that
// has, within zone.
func (s *server) exists(name, zone string) bool {
	for n := range s.records {
		if (n == name || strings.HasSuffix(n, "."+name)) && dns.IsSubDomain(zone, n) {
			return true
		}
	}
	return name == zone
}

func (s *server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	s.queries.Add(1)
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	m := new(dns.Msg)
	m.SetReply(r)
	if len(r.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	zone := s.zoneOf(name)
	if zone != "" {
		m.Authoritative = true
	}
	switch {
	case zone == "" || !s.exists(name, zone):
		m.Rcode = dns.RcodeNameError
	case q.Qtype == dns.TypeA && s.records[name] != nil:
		m.Answer = append(m.Answer, &dns.A{
			Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: s.ttl},
			A:   s.records[name],
		})
	}
	if len(m.Answer) == 0 && zone != "" {
		// Negative answers carry the zone's SOA, so that caches keep them.
		m.Ns = append(m.Ns, &dns.SOA{
			Hdr:     dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: s.ttl},
			Ns:      "ns." + zone,
			Mbox:    "hostmaster." + zone,
			Serial:  1,
			Refresh: 3600, Retry: 600, Expire: 86400, Minttl: s.ttl,
		})
	}
	_ = w.WriteMsg(m)
}

// listen binds UDP and TCP on the same address; port 0 picks one free for
// both.
func listen(addr string) (net.PacketConn, net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, err
	}
	for range 20 {
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, port))
		if err != nil {
			return nil, nil, err
		}
		_, p, _ := net.SplitHostPort(pc.LocalAddr().String())
		l, err := net.Listen("tcp", net.JoinHostPort(host, p))
		if err == nil {
			return pc, l, nil
		}
		pc.Close()
		if port != "0" {
			return nil, nil, err
		}
	}
	return nil, nil, fmt.Errorf("no port free for both UDP and TCP on %s", host)
}

func main() {
	var zones, records listFlag
	addr := flag.String("listen", "127.0.0.1:0", "ADDR:PORT to serve UDP and TCP on (port 0 picks a free one)")
	flag.Var(&zones, "zone", "zones to be authoritative for, comma-separated or repeated")
	flag.Var(&records, "a", "NAME=IPV4 A records, comma-separated or repeated")
	delay := flag.Duration("delay", 0, "delay added to every reply")
	ttl := flag.Uint("ttl", 30, "TTL of the records and of negative answers")
	flag.Parse()

	s := &server{records: map[string]net.IP{}, delay: *delay, ttl: uint32(*ttl)}
	for _, z := range zones {
		s.zones = append(s.zones, strings.ToLower(dns.Fqdn(z)))
	}
	for _, rec := range records {
		name, ip, ok := strings.Cut(rec, "=")
		a := net.ParseIP(ip).To4()
		if !ok || a == nil {
			fmt.Fprintf(os.Stderr, "-a %q: want NAME=IPV4\n", rec)
			os.Exit(2)
		}
		name = strings.ToLower(dns.Fqdn(name))
		if s.zoneOf(name) == "" {
			fmt.Fprintf(os.Stderr, "-a %q: %s is in no -zone\n", rec, name)
			os.Exit(2)
		}
		s.records[name] = a
	}

	pc, l, err := listen(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	errc := make(chan error, 2)
	var servers []*dns.Server
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: s}, {Listener: l, Handler: s}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { errc <- srv.ActivateAndServe() }()
		select {
		case <-started:
		case err := <-errc:
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		servers = append(servers, srv)
	}
	fmt.Printf("listening on %s\n", pc.LocalAddr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case err := <-errc:
		fmt.Fprintln(os.Stderr, err)
	}
	for _, srv := range servers {
		_ = srv.Shutdown()
	}
	fmt.Fprintf(os.Stderr, "dnsupstream: %d queries\n", s.queries.Load())
}
