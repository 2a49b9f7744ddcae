package coredns

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/metrics/vars"
	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"

	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// countingStub is a UDP miekg/dns resolver on 127.0.0.1 answering every A
// query with one address and recording the names it was asked. Unlike stub
// it tolerates queries without a question.
type countingStub struct {
	addr string
	srv  *dns.Server
	mu   sync.Mutex
	seen map[string]int
}

func startCountingStub(t *testing.T, answer net.IP) *countingStub {
	t.Helper()
	s := &countingStub{seen: map[string]int{}}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if len(r.Question) > 0 {
			q := r.Question[0]
			s.mu.Lock()
			s.seen[strings.ToLower(q.Name)]++
			s.mu.Unlock()
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: answer})
			}
		}
		_ = w.WriteMsg(m)
	})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = pc.LocalAddr().String()
	started := make(chan struct{})
	s.srv = &dns.Server{PacketConn: pc, Handler: h, NotifyStartedFunc: func() { close(started) }}
	go func() { _ = s.srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = s.srv.Shutdown() })
	return s
}

// count returns how many of names the stub was asked.
func (s *countingStub) count(names []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, name := range names {
		if s.seen[strings.ToLower(name)] > 0 {
			n++
		}
	}
	return n
}

// queryA asks addr over UDP for name A and checks for the single answer want.
func queryA(addr, name string, want net.IP, timeout time.Duration) error {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	c := &dns.Client{Timeout: timeout}
	resp, _, err := c.Exchange(m, addr)
	if err != nil {
		return err
	}
	if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 1 {
		return fmt.Errorf("%s: rcode %s, %d answers", name, dns.RcodeToString[resp.Rcode], len(resp.Answer))
	}
	if a, ok := resp.Answer[0].(*dns.A); !ok || !a.A.Equal(want) {
		return fmt.Errorf("%s: answer %v, want A %s", name, resp.Answer[0], want)
	}
	return nil
}

// TestForwardFailover kills one of two upstream resolvers behind a
// forwarding server and checks that, after a bounded failover window, every
// query is answered through the surviving upstream. Every query uses a
// fresh name so that none is answered from the cache.
func TestForwardFailover(t *testing.T) {
	answer := net.IPv4(192, 0, 2, 7)
	tests := []struct {
		name string
		// corefile renders the server's Corefile for port and the upstreams.
		corefile func(t *testing.T, port int, up1, up2 string) string
		// sequential: up1 gets every query while it is up.
		sequential bool
	}{
		{
			name: "node cache Corefile",
			corefile: func(t *testing.T, port int, up1, up2 string) string {
				t.Helper()
				// The node cache's resolvers are the cluster DNS
				// addresses, for external names too.
				c, err := corefile.NodeCache(corefile.NodeCacheOptions{
					Listen:     []string{fmt.Sprintf("127.0.0.1:%d", port)},
					ClusterDNS: []string{up1, up2},
					CacheTTL:   1,
				})
				if err != nil {
					t.Fatal(err)
				}
				return c
			},
		},
		{
			name: "forward with health_check and sequential policy",
			corefile: func(t *testing.T, port int, up1, up2 string) string {
				t.Helper()
				return fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    forward . %s %s {
        health_check 100ms
        max_fails 1
        policy sequential
    }
}
`, port, up1, up2)
			},
			sequential: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up1 := startCountingStub(t, answer)
			up2 := startCountingStub(t, answer)
			port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
			corefile := tt.corefile(t, port, up1.addr, up2.addr)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv, err := Start(ctx, corefile, nil)
			if err != nil {
				t.Fatalf("%v\n%s", err, corefile)
			}
			defer func() {
				if err := srv.Stop(); err != nil {
					t.Errorf("stopping srv: %v", err)
				}
			}()
			addr := fmt.Sprintf("127.0.0.1:%d", port)

			// Both upstreams up: every query succeeds.
			var pre []string
			for i := range 6 {
				name := fmt.Sprintf("pre-%d.example.com.", i)
				pre = append(pre, name)
				if err := queryA(addr, name, answer, 5*time.Second); err != nil {
					t.Fatalf("before failover: %v", err)
				}
			}
			if got := up1.count(pre) + up2.count(pre); got != len(pre) {
				t.Fatalf("upstreams saw %d of %d uncached queries", got, len(pre))
			}
			if tt.sequential && up1.count(pre) != len(pre) {
				t.Fatalf("sequential policy: up1 saw %d of %d queries before failover", up1.count(pre), len(pre))
			}

			// Kill upstream 1.
			if err := up1.srv.Shutdown(); err != nil {
				t.Fatalf("stopping upstream 1: %v", err)
			}
			failedAt := time.Now()

			// Failover window: at most 10 s until 5 queries in a row succeed.
			deadline := failedAt.Add(10 * time.Second)
			ok, failures := 0, 0
			for i := 0; ok < 5; i++ {
				if time.Now().After(deadline) {
					t.Fatalf("no failover within 10s: %d failed queries, last run of successes %d", failures, ok)
				}
				if err := queryA(addr, fmt.Sprintf("window-%d.example.com.", i), answer, 3*time.Second); err != nil {
					failures++
					ok = 0
					t.Logf("during failover window: %v", err)
					time.Sleep(50 * time.Millisecond)
					continue
				}
				ok++
			}
			t.Logf("failover window %v, %d failed queries in it", time.Since(failedAt).Round(time.Millisecond), failures)

			// After the window: no query fails, and each reached upstream 2.
			var post []string
			for i := range 20 {
				name := fmt.Sprintf("post-%d.example.com.", i)
				post = append(post, name)
				if err := queryA(addr, name, answer, 5*time.Second); err != nil {
					t.Errorf("after failover: %v", err)
				}
			}
			if got := up2.count(post); got != len(post) {
				t.Errorf("upstream 2 saw %d of %d queries sent after failover", got, len(post))
			}
			if got := up1.count(post); got != 0 {
				t.Errorf("stopped upstream 1 saw %d queries", got)
			}
		})
	}
}

// panics returns CoreDNS's coredns_panics_total: ServeDNS recovers a plugin
// panic and counts it, so "no crash" is also "no recovered panic".
func panics(t *testing.T) float64 {
	t.Helper()
	var m dto.Metric
	if err := vars.Panic.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// rawName encodes labels as a wire-format name without any checks (labels
// may be longer than 63 bytes, the name longer than 255).
func rawName(labels ...string) []byte {
	var b []byte
	for _, l := range labels {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	return append(b, 0)
}

// rawQuery builds a message from a header with the given flags and counts
// and an arbitrary body.
func rawQuery(id, flags, qd, an, ns, ar uint16, body []byte) []byte {
	b := make([]byte, 12, 12+len(body))
	for i, v := range []uint16{id, flags, qd, an, ns, ar} {
		binary.BigEndian.PutUint16(b[2*i:], v)
	}
	return append(b, body...)
}

// question is a wire question: name, type, class.
func question(name []byte, qtype, qclass uint16) []byte {
	b := append([]byte(nil), name...)
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, qtype), qclass)
}

// fillName prepends labels to suffix (a FQDN without escapes) so that the
// name is exactly wireLen bytes on the wire.
func fillName(suffix string, wireLen int) string {
	remaining := wireLen - (len(suffix) + 1)
	var labels []string
	for remaining > 0 {
		n := min(63, remaining-1)
		if remaining-(n+1) == 1 {
			n--
		}
		labels = append(labels, strings.Repeat("a", n))
		remaining -= n + 1
	}
	return strings.Join(append(labels, suffix), ".")
}

// adversarialPackets returns the malformed and adversarial queries, built
// from a seeded PRNG so that a failure is reproducible.
func adversarialPackets(t *testing.T, code uint16) [][]byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(2, 5))
	var pkts [][]byte
	pack := func(m *dns.Msg) {
		m.Id = uint16(rng.Uint32())
		b, err := m.Pack()
		if err != nil {
			t.Fatalf("packing %v: %v", m.Question, err)
		}
		pkts = append(pkts, b)
	}
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	const apName = "svc1.search.ns1.cluster.local.ap.k8s.io."
	withOption := func(name string, qtype uint16, opts ...dns.EDNS0) *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		m.SetEdns0(1232, false)
		m.IsEdns0().Option = opts
		return m
	}
	local := func(v []byte) dns.EDNS0 { return &dns.EDNS0_LOCAL{Code: code, Data: v} }
	list := func(n int, f func(i int) string) []byte {
		s := make([]string, n)
		for i := range s {
			s[i] = f(i)
		}
		return []byte(strings.Join(s, ","))
	}

	// Random bytes, and random bodies behind a plausible query header.
	for range 150 {
		pkts = append(pkts, randBytes(rng.IntN(600)))
	}
	for range 50 {
		pkts = append(pkts, rawQuery(uint16(rng.Uint32()), 0x0100, 1, 0, 0, uint16(rng.IntN(3)), randBytes(rng.IntN(300))))
	}

	// Every truncation of a valid autopath query with an option.
	full, err := withOption(apName, dns.TypeA, local([]byte("ns1.svc.cluster.local,svc.cluster.local"))).Pack()
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(full) {
		pkts = append(pkts, full[:i])
	}

	// Valid headers with absurd counts and flags.
	q := question(rawName("svc1", "search", "ns1", "cluster", "local", "ap", "k8s", "io"), dns.TypeA, dns.ClassINET)
	for _, c := range [][4]uint16{
		{0xffff, 0, 0, 0}, {0, 0xffff, 0, 0}, {0, 0, 0xffff, 0}, {0, 0, 0, 0xffff},
		{0xffff, 0xffff, 0xffff, 0xffff}, {0, 0, 0, 0}, {2, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 0, 1}, {1, 0, 0, 2},
	} {
		pkts = append(pkts, rawQuery(1, 0x0100, c[0], c[1], c[2], c[3], q))
		pkts = append(pkts, rawQuery(2, 0x0100, c[0], c[1], c[2], c[3], nil))
	}
	for _, flags := range []uint16{
		0x8100,                            // a response
		0x7900,                            // opcode 15
		0x2100,                            // opcode NOTIFY
		0x2900,                            // opcode UPDATE
		0x0300,                            // TC set on a query
		0x0140,                            // Z bit
		0x010f,                            // rcode 15
		0xffff,                            // everything
		0x0000 | 0x0010 /* AD */ | 0x0020, /* CD */
	} {
		pkts = append(pkts, rawQuery(3, flags, 1, 0, 0, 0, q))
	}

	// Broken names on the wire.
	for _, name := range [][]byte{
		{0xc0, 0x0c},            // pointer to itself
		{0xc0, 0xff},            // pointer past the end
		{0x01, 'a', 0xc0, 0x0c}, // pointer loop through a label
		{0x41, 'a'},             // extended label type
		{0x80, 'a'},             // reserved label type
		{0x3f, 'a'},             // label longer than the message
		rawName(strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 63), "ap", "k8s", "io"), // 264 bytes
		rawName(strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 63), strings.Repeat("e", 63)),
		rawName(strings.Repeat("a", 70), "search", "ns1", "cluster", "local", "ap", "k8s", "io"), // label of 70 bytes
		rawName("a\x00b", "search", "ns1", "cluster", "local", "ap", "k8s", "io"),
		rawName("", "search", "ns1", "cluster", "local", "ap", "k8s", "io"),
	} {
		pkts = append(pkts, rawQuery(4, 0x0100, 1, 0, 0, 0, question(name, dns.TypeA, dns.ClassINET)))
	}

	// OPT records carrying the search list option with bad values.
	long253 := fillName("example", 255)
	long253 = strings.TrimSuffix(long253, ".")
	for _, opts := range [][]dns.EDNS0{
		{local(nil)},
		{local([]byte(","))},
		{local([]byte(",,,,"))},
		{local(randBytes(40))},
		{local(randBytes(2048))},
		{local(randBytes(4000))},
		{local([]byte(strings.Repeat("a", 3000)))},
		{local(list(40, func(i int) string { return fmt.Sprintf("d%d.example", i) }))},
		{local(list(33, func(i int) string { return fmt.Sprintf("d%d.example", i) }))},
		{local(list(32, func(i int) string { return fmt.Sprintf("d%d.example", i) }))},
		{local(list(40, func(int) string { return "" }))},
		{local(list(32, func(i int) string { return strings.Repeat("x", 63) }))},
		{local([]byte("a..b,-a.com,a-.com,a.com.,UPPER.COM"))},
		{local([]byte("\x00,\xff\xfe,ünicode.com"))},
		{local([]byte(long253))},
		{local([]byte(long253 + "x"))},
		{local([]byte(strings.Repeat("a", 64) + ".com"))},
		{local([]byte("ns1.svc.cluster.local")), local([]byte("evil.example"))},
		{local([]byte("ns1.svc.cluster.local")), local([]byte("ns1.svc.cluster.local")), local(randBytes(10))},
		{&dns.EDNS0_LOCAL{Code: code - 1, Data: randBytes(30)}, local([]byte(long253))},
		{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "00"}, local([]byte("x.example"))},
	} {
		for _, name := range []string{apName, "nope.search.ns1.cluster.local.ap.k8s.io.", "_http._tcp.svc1.search.ns1.cluster.local.ap.k8s.io.", "ext.example.com."} {
			pack(withOption(name, dns.TypeA, opts...))
		}
		pack(withOption(apName, dns.TypeSRV, opts...))
	}
	// Two OPT records, an OPT with version 1, a zero and a huge buffer size.
	m := withOption(apName, dns.TypeA, local([]byte("ns1.svc.cluster.local")))
	m.Extra = append(m.Extra, m.Extra[0])
	pack(m)
	for _, size := range []uint16{0, 1, 65535} {
		m := withOption(apName, dns.TypeA, local([]byte("svc.cluster.local")))
		m.IsEdns0().SetUDPSize(size)
		m.IsEdns0().SetVersion(uint8(size))
		m.IsEdns0().SetDo()
		pack(m)
	}

	// Long names: the longest legal ap name, and a long base whose candidates
	// with a long search domain would exceed 255 bytes.
	longAP := fillName("search.ns1.cluster.local.ap.k8s.io.", 255)
	pack(withOption(longAP, dns.TypeA))
	pack(withOption(longAP, dns.TypeA, local([]byte(long253))))
	pack(withOption(fillName("ap.k8s.io.", 255), dns.TypeA))
	pack(withOption(fillName("cluster.local.", 255), dns.TypeA))
	pack(withOption(fillName("search.ns1.cluster.local.ap.k8s.io.", 200), dns.TypeA, local(list(32, func(int) string { return long253[:100] }))))

	// ap.k8s.io. names of every odd shape, with odd types and classes.
	names := []string{
		"ap.k8s.io.", "k8s.io.", "search.ap.k8s.io.", "x.search.ap.k8s.io.",
		"search.cluster.local.ap.k8s.io.", "search.ns1.cluster.local.ap.k8s.io.",
		"x.search.cluster.local.ap.k8s.io.", "search.search.ns1.cluster.local.ap.k8s.io.",
		"search.search.search.cluster.local.ap.k8s.io.", "x.search.search.cluster.local.ap.k8s.io.",
		"x.search.ns1.cluster.local.AP.K8S.IO.", "X.SEARCH.NS1.CLUSTER.LOCAL.AP.K8S.IO.",
		"x.search.ns1.cluster.local.ap.k8s.io.ap.k8s.io.", "x.search.ns1.cluster.local.cluster.local.ap.k8s.io.",
		"x.search.-.cluster.local.ap.k8s.io.", "x.search.ns1.other.ap.k8s.io.", "x.search.ns1.local.ap.k8s.io.",
		`\000.search.ns1.cluster.local.ap.k8s.io.`, `a\.b.search.ns1.cluster.local.ap.k8s.io.`,
		`\255\255.search.ns1.cluster.local.ap.k8s.io.`, `x\032y.search.ns1.cluster.local.ap.k8s.io.`,
		"*.search.ns1.cluster.local.ap.k8s.io.", `x.search.a\.b.cluster.local.ap.k8s.io.`,
		`x.search.ns1.cluster\.local.ap.k8s.io.`, `x.search.ns1\000.cluster.local.ap.k8s.io.`,
		strings.Repeat("a.", 100) + "search.ns1.cluster.local.ap.k8s.io.",
		strings.Repeat("search.", 30) + "ns1.cluster.local.ap.k8s.io.",
		strings.Repeat("z", 63) + ".search." + strings.Repeat("n", 63) + ".cluster.local.ap.k8s.io.",
		"1.0.96.10.in-addr.arpa.search.ns1.cluster.local.ap.k8s.io.",
	}
	for _, name := range names {
		for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeANY, dns.TypeAXFR, dns.TypePTR, dns.TypeNone, 65535} {
			pack(withOption(name, qt))
		}
		for _, class := range []uint16{dns.ClassCHAOS, dns.ClassANY, 0, 65535} {
			m := new(dns.Msg)
			m.SetQuestion(name, dns.TypeTXT)
			m.Question[0].Qclass = class
			pack(m)
		}
	}
	return pkts
}

// flood sends pkts to addr over UDP, ignoring responses, and returns how
// many responses arrived.
func flood(t *testing.T, addr string, pkts [][]byte) int {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var responses atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65535)
		for {
			_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			if _, err := conn.Read(buf); err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					return
				}
				// ICMP errors surface as read errors on a connected
				// socket; keep draining.
				continue
			}
			responses.Add(1)
		}
	}()
	for i, p := range pkts {
		_, _ = conn.Write(p)
		if i%50 == 49 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	<-done
	conn.Close()
	return int(responses.Load())
}

// checkAutopath asks addr for name A and wants name CNAME target and
// target A want.
func checkAutopath(t *testing.T, addr, name, target string, want net.IP) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	c := &dns.Client{Timeout: 2 * time.Second}
	resp, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Errorf("%s after the flood: %v", addr, err)
		return
	}
	if resp.Rcode != dns.RcodeSuccess || len(resp.Answer) != 2 {
		t.Errorf("%s after the flood: %s %s: want CNAME + A, got %v", addr, name, dns.RcodeToString[resp.Rcode], resp.Answer)
		return
	}
	if cn, ok := resp.Answer[0].(*dns.CNAME); !ok || !strings.EqualFold(cn.Hdr.Name, name) || !strings.EqualFold(cn.Target, target) {
		t.Errorf("%s after the flood: answer[0] %v, want %s CNAME %s", addr, resp.Answer[0], name, target)
	}
	if a, ok := resp.Answer[1].(*dns.A); !ok || !strings.EqualFold(a.Hdr.Name, target) || !a.A.Equal(want) {
		t.Errorf("%s after the flood: answer[1] %v, want %s A %s", addr, resp.Answer[1], target, want)
	}
}

// TestMalformedQueriesNeverCrash floods a node cache and a cluster DNS
// (searchexpand over hosts) with malformed and adversarial UDP queries and
// checks that both still answer correctly and that no plugin panicked.
func TestMalformedQueriesNeverCrash(t *testing.T) {
	const code = 65534
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	hostsFile := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hostsFile, []byte("10.96.0.10 svc1.ns1.svc.cluster.local\n10.96.0.11 check.ns1.svc.cluster.local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	upstream := startCountingStub(t, net.IPv4(192, 0, 2, 1))
	clusterPort := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	clusterCorefile := fmt.Sprintf(`.:%d {
    bind 127.0.0.1
    searchexpand cluster.local {
        code %d
    }
    hosts %s cluster.local {
        ttl 30
    }
    forward . %s
}
`, clusterPort, code, hostsFile, upstream.addr)
	cluster, err := Start(ctx, clusterCorefile, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, clusterCorefile)
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping cluster: %v", err)
		}
	}()
	clusterAddr := fmt.Sprintf("127.0.0.1:%d", clusterPort)

	nodePort := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	nodeCorefile, err := corefile.NodeCache(corefile.NodeCacheOptions{
		Listen:     []string{fmt.Sprintf("127.0.0.1:%d", nodePort)},
		ClusterDNS: []string{clusterAddr},
		OptionCode: code,
		HostSearch: []string{"corp.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	node, err := Start(ctx, nodeCorefile, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, nodeCorefile)
	}
	defer func() {
		if err := node.Stop(); err != nil {
			t.Errorf("stopping node: %v", err)
		}
	}()
	nodeAddr := fmt.Sprintf("127.0.0.1:%d", nodePort)

	pkts := adversarialPackets(t, code)
	before := panics(t)
	for _, s := range []struct{ name, addr string }{{"node cache", nodeAddr}, {"cluster DNS", clusterAddr}} {
		n := flood(t, s.addr, pkts)
		t.Logf("%s: sent %d adversarial packets, %d responses", s.name, len(pkts), n)
		if n > len(pkts) {
			// Some query was answered twice: a plugin wrote a reply and
			// returned a code that makes the server write another.
			t.Errorf("%s: %d responses to %d packets", s.name, n, len(pkts))
		}
	}

	// Both still answer: autopath on the cluster DNS directly (derived
	// list) and through the node cache (tagged), and an external name.
	const name, target = "check.search.ns1.cluster.local.ap.k8s.io.", "check.ns1.svc.cluster.local."
	checkAutopath(t, clusterAddr, name, target, net.IPv4(10, 96, 0, 11))
	checkAutopath(t, nodeAddr, name, target, net.IPv4(10, 96, 0, 11))
	if err := queryA(nodeAddr, "after.example.com.", net.IPv4(192, 0, 2, 1), 2*time.Second); err != nil {
		t.Errorf("node cache after the flood: %v", err)
	}
	if d := panics(t) - before; d != 0 {
		t.Errorf("CoreDNS recovered %v panics while serving the adversarial queries", d)
	}
}
