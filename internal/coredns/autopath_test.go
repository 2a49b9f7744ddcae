package coredns

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/dnsplane/dnsplane/internal/testkit"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

// startZoneResolver starts a miekg/dns server on 127.0.0.1 (UDP and TCP,
// same port) answering authoritatively from records; a name that is not in
// records, and is not an ancestor of one within zones, is NXDOMAIN. It
// counts the queries it receives.
func startZoneResolver(t *testing.T, zones []string, records map[string]net.IP) (string, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	exists := func(name string) bool {
		for n := range records {
			if n == name || strings.HasSuffix(n, "."+name) {
				// Only names inside a zone we are authoritative for.
				for _, z := range zones {
					if dns.IsSubDomain(z, name) {
						return true
					}
				}
			}
		}
		return false
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		count.Add(1)
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		q := r.Question[0]
		name := strings.ToLower(q.Name)
		switch {
		case !exists(name):
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA && records[name] != nil:
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: records[name]})
		}
		_ = w.WriteMsg(m)
	})
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for _, network := range []string{"udp", "tcp"} {
		started := make(chan struct{})
		s := &dns.Server{Addr: addr, Net: network, Handler: h, NotifyStartedFunc: func() { close(started) }}
		errc := make(chan error, 1)
		go func() { errc <- s.ListenAndServe() }()
		select {
		case <-started:
		case err := <-errc:
			t.Fatalf("upstream resolver %s: %v", network, err)
		}
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	return addr, &count
}

// settledCount returns n once it has stopped changing. searchexpand asks
// the forwarded candidates concurrently and answers with the first that
// exists in search order, so the later candidates of a lookup that has
// already been answered (the bare name after intranet.corp.example) may
// still reach the upstream afterwards; counting from before they land
// would charge them to the next query.
func settledCount(t *testing.T, n *atomic.Int64) int64 {
	t.Helper()
	const quiet = 300 * time.Millisecond
	deadline := time.Now().Add(10 * time.Second)
	last := n.Load()
	for time.Now().Before(deadline) {
		time.Sleep(quiet)
		cur := n.Load()
		if cur == last {
			return cur
		}
		last = cur
	}
	t.Fatalf("upstream query count still changing after 10s (at %d)", last)
	return 0
}

// TestAutopathMatchesClusterFirst checks that a ClusterFirstWithAutopath
// lookup (one query to the node cache, expanded by searchexpand on the
// cluster DNS) finds the same record as a ClusterFirst pod's resolver
// walking its search list, for cluster, cross-namespace, external,
// host-search-path and nonexistent names, and with far fewer queries.
func TestAutopathMatchesClusterFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and two CoreDNS instances")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	st := startAutopathStack(t, ctx)
	clusterIPs, upstreamQueries, clusterAddr, nodeAddr := st.clusterIPs, st.upstreamQueries, st.clusterAddr, st.nodeAddr

	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	query := func(addr, name string) (*dns.Msg, error) {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		m.RecursionDesired = true
		r, _, err := c.Exchange(m, addr)
		return r, err
	}
	aRecords := func(r *dns.Msg) []string {
		var ips []string
		for _, rr := range r.Answer {
			if a, ok := rr.(*dns.A); ok {
				ips = append(ips, a.A.String())
			}
		}
		slices.Sort(ips)
		return ips
	}

	// A ClusterFirst pod's stub resolver (ndots 5, as glibc does).
	search := []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}
	clusterFirst := &podResolver{server: nodeAddr, search: search, client: c}

	tests := []struct {
		class, name string
		found       string // FQDN the search finds; "" for NXDOMAIN
		ip          string
	}{
		{"same namespace", "svc1", "svc1.ns1.svc.cluster.local.", clusterIPs["svc1"]},
		{"cross namespace", "svc2.ns2", "svc2.ns2.svc.cluster.local.", clusterIPs["svc2"]},
		{"external", "example.com", "example.com.", "93.184.216.34"},
		{"host search path", "intranet", "intranet.corp.example.", "10.9.9.9"},
		{"nonexistent", "nope", "", ""},
	}
	apSuffix := "." + searchpath.SearchName("ns1", "cluster.local") + "."
	type counts struct{ cf, ap, cfUp, apUp int64 }
	table := make([]counts, len(tests))
	for i, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			// Autopath first: one query to the node cache. Both go
			// through the cluster DNS's cache, so the upstream queries
			// counted are the first pass's; ClusterFirst's are logged
			// only.
			apName := tt.name + apSuffix
			up0 := settledCount(t, upstreamQueries)
			r, err := query(nodeAddr, apName)
			table[i].ap, table[i].apUp = 1, settledCount(t, upstreamQueries)-up0
			if err != nil {
				t.Fatalf("autopath query %s: %v", apName, err)
			}

			// ClusterFirst: the pod's resolver against the node cache.
			up0 = settledCount(t, upstreamQueries)
			sent0 := clusterFirst.sent.Load()
			cfFound, cfIPs, err := clusterFirst.lookup(tt.name)
			if err != nil {
				t.Fatalf("ClusterFirst lookup: %v", err)
			}
			cfSent := int(clusterFirst.sent.Load() - sent0)
			table[i].cf, table[i].cfUp = int64(cfSent), settledCount(t, upstreamQueries)-up0

			if tt.found == "" {
				if cfFound != "" {
					t.Errorf("ClusterFirst found %s %v; want no answer", cfFound, cfIPs)
				}
				if r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 {
					t.Errorf("autopath %s = %v; want NXDOMAIN", apName, r)
				}
				if want := len(search) + 1; cfSent != want {
					t.Errorf("ClusterFirst sent %d queries, want %d", cfSent, want)
				}
				return
			}
			if cfFound != tt.found || !slices.Equal(cfIPs, []string{tt.ip}) {
				t.Errorf("ClusterFirst found %s %v; want %s %s", cfFound, cfIPs, tt.found, tt.ip)
			}
			if r.Rcode != dns.RcodeSuccess || len(r.Answer) < 2 {
				t.Fatalf("autopath %s = %v; want CNAME and A", apName, r)
			}
			cn, ok := r.Answer[0].(*dns.CNAME)
			if !ok || !strings.EqualFold(cn.Hdr.Name, apName) || !strings.EqualFold(cn.Target, tt.found) {
				t.Errorf("autopath first RR %v; want %s CNAME %s", r.Answer[0], apName, tt.found)
			}
			if apIPs := aRecords(r); !slices.Equal(apIPs, cfIPs) {
				t.Errorf("autopath A %v, ClusterFirst A %v", apIPs, cfIPs)
			}
			if want := slices.Index(searchpath.Candidates(tt.name, search), tt.found) + 1; cfSent != want {
				t.Errorf("ClusterFirst sent %d queries, want %d", cfSent, want)
			}
		})
	}
	// Upstream queries: searchexpand asks the forwarded candidates (host
	// search path, bare name) only once every cluster candidate missed, so a
	// cluster name costs none; otherwise both are asked concurrently. The
	// ClusterFirst column is lower for the host search path because it
	// stops there and never asks the bare name.
	for i, tt := range tests {
		want := int64(2)
		if strings.HasSuffix(tt.found, ".cluster.local.") {
			want = 0
		}
		if table[i].apUp != want {
			t.Errorf("%s: autopath sent %d queries upstream, want %d", tt.class, table[i].apUp, want)
		}
	}
	t.Logf("queries per A lookup from a pod in ns1 (pod->DNS; upstream resolver queries in parentheses):")
	t.Logf("%-18s %-12s %14s %10s", "class", "name", "ClusterFirst", "autopath")
	for i, tt := range tests {
		t.Logf("%-18s %-12s %9d (%2d) %5d (%2d)", tt.class, tt.name, table[i].cf, table[i].cfUp, table[i].ap, table[i].apUp)
	}

	// Node cache bypassed: the autopath name sent straight to the cluster
	// DNS carries no option, so searchexpand uses the derived list: cluster
	// names still resolve, host search paths are not tried.
	t.Run("bypassed node cache", func(t *testing.T) {
		for _, tt := range tests[:2] {
			apName := tt.name + apSuffix
			r, err := query(clusterAddr, apName)
			if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) < 2 {
				t.Fatalf("%s = %v, %v; want CNAME and A", apName, r, err)
			}
			if cn, ok := r.Answer[0].(*dns.CNAME); !ok || !strings.EqualFold(cn.Target, tt.found) {
				t.Errorf("%s first RR %v; want CNAME %s", apName, r.Answer[0], tt.found)
			}
			if ips := aRecords(r); !slices.Equal(ips, []string{tt.ip}) {
				t.Errorf("%s A %v; want %s", apName, ips, tt.ip)
			}
		}
		apName := "intranet" + apSuffix
		r, err := query(clusterAddr, apName)
		if err != nil || r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 {
			t.Errorf("%s = %v, %v; want NXDOMAIN (host search paths not tried)", apName, r, err)
		}
	})
}
