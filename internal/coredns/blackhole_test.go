package coredns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/corefile"
	"github.com/dnsplane/dnsplane/internal/testkit"
)

// blackhole is a resolver that never answers: over UDP it reads and drops
// every query, over TCP it accepts, reads and never replies. It stands for
// an upstream that is down without refusing (a firewall dropping packets),
// the case in which the forward plugin holds a socket per query for its
// whole timeout (docs/dns-operator.md, "Bounded forwarding").
type blackhole struct {
	addr string
	// tcpOpen counts the accepted connections still open: they are this
	// process's descriptors too, which the test must not charge to CoreDNS.
	tcpOpen atomic.Int64
	queries atomic.Int64
}

func startBlackhole(t *testing.T, host string) *blackhole {
	t.Helper()
	b := &blackhole{}
	port := testkit.FreeUDPTCPPort(t, "127.0.0.1")
	b.addr = net.JoinHostPort(host, fmt.Sprint(port))
	pc, err := net.ListenPacket("udp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", b.addr)
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	stopped := false
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 65535)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			b.queries.Add(1)
		}
	}()
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if stopped {
				mu.Unlock()
				c.Close()
				return
			}
			conns = append(conns, c)
			mu.Unlock()
			b.tcpOpen.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer b.tcpOpen.Add(-1)
				defer c.Close()
				n, _ := io.Copy(io.Discard, c) // until the client gives up
				if n > 0 {
					b.queries.Add(1)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		pc.Close()
		ln.Close()
		mu.Lock()
		stopped = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return b
}

// burstQueries sends n A queries for fmt.Sprintf(format, i) to addr from
// one UDP socket at about rate queries a second, as dnsperf would, and
// counts by rcode the replies that come back within quick of the first
// one sent. One socket: the client's own descriptors must not grow with
// the query count. Paced, because a burst written at once overflows the
// server's socket buffer and the kernel drops most of it.
func burstQueries(ctx context.Context, addr, format string, n, rate int, quick time.Duration) (map[int]int, error) {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(quick)); err != nil {
		return nil, err
	}
	rcodes := map[int]int{}
	read := make(chan error, 1)
	go func() {
		buf := make([]byte, 65535)
		for {
			k, err := conn.Read(buf)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					err = nil
				}
				read <- err
				return
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:k]) == nil {
				rcodes[m.Rcode]++
			}
		}
	}()
	const tick = 10 * time.Millisecond
	perTick := max(1, rate*int(tick)/int(time.Second))
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for i := 0; i < n; {
		for end := min(n, i+perTick); i < end; i++ {
			m := new(dns.Msg)
			m.SetQuestion(fmt.Sprintf(format, i), dns.TypeA)
			m.Id = uint16(i)
			buf, err := m.Pack()
			if err != nil {
				return nil, err
			}
			if _, err := conn.Write(buf); err != nil {
				return nil, fmt.Errorf("query %d: %w", i, err)
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ticker.C:
		}
	}
	// The reader stops at the read deadline; rcodes is its own until then.
	if err := <-read; err != nil {
		return nil, err
	}
	return rcodes, nil
}

// TestBlackholeUpstreamBounded: with the upstream resolvers and a stub
// domain's nameserver all a blackhole, a burst of queries through the node
// cache and to the cluster DNS (both in this process, as in `dnsplane up`)
// costs at most corefile.MaxConcurrent descriptors per forward plugin on
// its path, not one per query; the queries over that are refused at once;
// and the cluster domain and the API keep answering meanwhile.
//
// Not parallel: it counts this process's descriptors.
func TestBlackholeUpstreamBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and CoreDNS")
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur < 16384 {
		t.Skipf("descriptor limit %d: the unbounded case would fail on EMFILE instead", rl.Cur)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kubeconfig, cs := startAPIServer(t, ctx)
	if _, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	hole := startBlackhole(t, "127.0.0.3")
	cluster := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	nodeCache := fmt.Sprintf("127.0.0.1:%d", testkit.FreeUDPTCPPort(t, "127.0.0.1"))
	startClusterDNS(t, ctx, cluster, kubeconfig, []string{hole.addr}, []corefile.StubDomain{
		{Domain: "tcp.test", Upstreams: []string{hole.addr}, Forward: corefile.ForwardOptions{ForceTCP: true}},
	})
	text, err := corefile.NodeCache(corefile.NodeCacheOptions{Listen: []string{nodeCache}, ClusterDNS: []string{cluster}})
	if err != nil {
		t.Fatal(err)
	}
	startCorefile(t, ctx, text)

	c := &dns.Client{Net: "udp", Timeout: time.Second}
	answers := func(ctx context.Context) (bool, error) {
		m := new(dns.Msg)
		m.SetQuestion("web.default.svc.cluster.local.", dns.TypeA)
		r, _, err := c.ExchangeContext(ctx, m, nodeCache)
		return err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) == 1, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, answers); err != nil {
		t.Fatalf("web.default.svc.cluster.local never answered: %v", err)
	}

	fds := func() int { return openFDs(t) - int(hole.tcpOpen.Load()) }
	before := fds()

	// Watch the descriptors, the cluster domain and the API while the
	// queries are in flight (the forward plugin waits 5s per query).
	watchCtx, stopWatch := context.WithCancel(ctx)
	var peak atomic.Int64
	var clusterFailures, apiFailures atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = wait.PollUntilContextCancel(watchCtx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			if n := int64(fds()); n > peak.Load() {
				peak.Store(n)
			}
			return false, nil
		})
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = wait.PollUntilContextCancel(watchCtx, 200*time.Millisecond, false, func(ctx context.Context) (bool, error) {
			if ok, _ := answers(ctx); !ok && ctx.Err() == nil {
				clusterFailures.Add(1)
			}
			if _, err := cs.Discovery().ServerVersion(); err != nil && ctx.Err() == nil {
				apiFailures.Add(1)
			}
			return false, nil
		})
	}()

	// 4000 queries a path at 4000 a second (dnsplane's probe sent 2,500
	// a second in all): more in flight than the forward plugins on each
	// path may hold together, so that without max_concurrent the
	// descriptors pass the bound below. The forward plugin does not give
	// up on a query before its 2s read timeout, so every reply within
	// quick is a refusal.
	const burst, rate, quick = 4000, 4000, 1900 * time.Millisecond
	type result struct {
		name   string
		rcodes map[int]int
		err    error
	}
	results := make(chan result, 2)
	for _, f := range []struct{ name, addr, format string }{
		// A pod's path: the node cache's "." block, then the cluster
		// DNS's upstream resolvers.
		{"node cache", nodeCache, "q%d.example.org."},
		// A stub domain forwarded over TCP, straight to the cluster DNS.
		{"cluster DNS", cluster, "q%d.tcp.test."},
	} {
		go func() {
			r, err := burstQueries(ctx, f.addr, f.format, burst, rate, quick)
			results <- result{f.name, r, err}
		}()
	}
	got := map[string]map[int]int{}
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Errorf("%s: %v", r.name, r.err)
		}
		got[r.name] = r.rcodes
	}
	// The queries in flight end within the forward plugin's 5s deadline,
	// and their sockets with them; connections that carried an answer
	// (the cluster DNS's REFUSED, over the node cache's TCP forward) are
	// pooled and closed by forward's expiry sweep, which runs every
	// `expire` (10s) on what has been idle that long: up to 20s more. The
	// watchers go on meanwhile.
	settled := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 40*time.Second, false, func(context.Context) (bool, error) {
		return fds() <= before+128, nil
	})
	stopWatch()
	wg.Wait()

	// Forward plugins on the flooded paths: the node cache's ".", the
	// cluster DNS's "." and its tcp.test. Each holds at most one socket
	// per query in flight, plus its health checks and pooled connections.
	const forwards = 3
	bound := before + forwards*corefile.MaxConcurrent + 128
	t.Logf("descriptors: %d before, %d at peak (bound %d); upstream saw %d queries; quick replies %v",
		before, peak.Load(), bound, hole.queries.Load(), got)
	if p := int(peak.Load()); p > bound {
		t.Errorf("descriptors went from %d to %d over %d queries to a blackhole, want at most %d", before, p, 2*burst, bound)
	}
	for name, rcodes := range got {
		// The queries over the limit are refused at once; at least half
		// of them must come back before any in-flight query could time
		// out.
		got := rcodes[dns.RcodeRefused] + rcodes[dns.RcodeServerFailure]
		if want := (burst - corefile.MaxConcurrent) / 2; got < want {
			t.Errorf("%s: %d of %d queries refused within %v, want at least %d (rcodes %v)", name, got, burst, quick, want, rcodes)
		}
	}
	if n := clusterFailures.Load(); n > 0 {
		t.Errorf("web.default.svc.cluster.local failed %d times during the flood", n)
	}
	if n := apiFailures.Load(); n > 0 {
		t.Errorf("the API failed %d times during the flood", n)
	}
	if settled != nil {
		t.Errorf("descriptors went from %d to %d and stayed there after the flood: %v; open: %v", before, fds(), settled, fdKinds())
	}
}

// fdKinds counts this process's descriptors by what they are (socket,
// pipe, anon_inode:…, file), for a failure message.
func fdKinds() map[string]int {
	out := map[string]int{}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue
		}
		kind, _, _ := strings.Cut(target, ":")
		if strings.HasPrefix(target, "/") {
			kind = "file"
		}
		out[kind]++
	}
	return out
}
