package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/dnsplane/dnsplane/internal/testkit"
)

const (
	// blackholeNofile is `up`'s descriptor limit, as in the issue.
	blackholeNofile = 20000
	// blackholeRate and blackholeFor are the flood: the dnsperf
	// rate, long enough that without max_concurrent the queries in flight
	// (rate × the forward plugin's 5s) pass the descriptor limit.
	blackholeRate = 2500
	blackholeFor  = 8 * time.Second
	// blackholeBound is how many descriptors the flood may add: the node
	// cache's "." forward and the cluster DNS's upstream forward, at most
	// 1000 queries (and sockets) in flight each (corefile.MaxConcurrent),
	// plus room for health checks and the API's own use.
	blackholeBound = 2*1000 + 500
)

// startBlackholeServer is a nameserver on addr that never answers: it
// reads UDP queries and drops them, and accepts TCP connections and reads
// them until the client closes. It counts what it reads.
func startBlackholeServer(t *testing.T, addr string) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 65535)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
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
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				if k, _ := io.Copy(io.Discard, c); k > 0 {
					n.Add(1)
				}
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		pc.Close()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return &n
}

// TestBlackholeUpstreamKeepsUpAnswering is issue 29's finding 6: `up`
// under the 20,000-descriptor limit, its DNS resource forwarding
// every external name to a nameserver that never answers, and 2,500
// queries a second for external names sent to the node cache. Before
// max_concurrent, each query held a socket for 5s and `up` ran out of
// descriptors (12,776 "socket: too many open files"), the API with it.
// Now the descriptors stay within blackholeBound, the queries over the
// limit are refused at once, and the cluster domain and the API answer
// throughout.
func TestBlackholeUpstreamKeepsUpAnswering(t *testing.T) {
	requireKubectl(t)
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skipf("prlimit (util-linux) is not on PATH: %v", err)
	}
	holeAddr := fmt.Sprintf("127.0.0.3:%d", testkit.FreeUDPTCPPort(t, "127.0.0.3"))
	asked := startBlackholeServer(t, holeAddr)
	u := startUp(t, filepath.Join(t.TempDir(), "data"), []string{prlimit, fmt.Sprintf("--nofile=%d:%d", blackholeNofile, blackholeNofile)})
	host, port, _ := strings.Cut(holeAddr, ":")
	mustKubectl(t, u.Kubeconfig, fmt.Sprintf(`apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata:
  name: default
spec:
  upstreamResolvers:
    upstreams:
    - {type: Network, address: %s, port: %s}
`, host, port), "apply", "-f", "-")
	// Served once an external name reaches the blackhole.
	eventually(t, 30*time.Second, 200*time.Millisecond, func() (bool, string) {
		_, _ = exchangeA(u.ClusterDNS, fmt.Sprintf("probe%d.example.", time.Now().UnixNano()), 100*time.Millisecond)
		return asked.Load() > 0, "the cluster DNS has not asked the blackhole yet"
	})
	eventually(t, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		got, err := lookupA(u.NodeCache, "kubernetes.default.svc.cluster.local.")
		return err == nil && got == "10.96.0.1", fmt.Sprintf("kubernetes.default via the node cache: %q, %v", got, err)
	})
	pid := u.cmd.Process.Pid
	before, err := openDescriptors(pid)
	if err != nil {
		t.Skipf("no /proc/%d/fd: %v", pid, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	watchCtx, stopWatch := context.WithCancel(ctx)
	var peak atomic.Int64
	var mu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	cs := clientFor(t, u.Kubeconfig)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = wait.PollUntilContextCancel(watchCtx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			if n, err := openDescriptors(pid); err == nil && int64(n) > peak.Load() {
				peak.Store(int64(n))
			}
			return false, nil
		})
	}()
	go func() {
		defer wg.Done()
		_ = wait.PollUntilContextCancel(watchCtx, 250*time.Millisecond, false, func(ctx context.Context) (bool, error) {
			if got, err := lookupA(u.NodeCache, "kubernetes.default.svc.cluster.local."); (err != nil || got != "10.96.0.1") && ctx.Err() == nil {
				problem("kubernetes.default via the node cache: %q, %v", got, err)
			}
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			defer rcancel()
			if _, err := cs.CoreV1().Namespaces().Get(rctx, "default", metav1.GetOptions{}); err != nil && ctx.Err() == nil {
				problem("GET namespace default: %v", err)
			}
			return false, nil
		})
	}()

	sent, refused, err := floodUDP(ctx, u.NodeCache, blackholeRate, blackholeFor)
	if err != nil {
		t.Error(err)
	}
	// The queries in flight end within the forward plugin's 5s deadline,
	// and their sockets with them; the watchers go on meanwhile.
	settled := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 15*time.Second, false, func(context.Context) (bool, error) {
		n, err := openDescriptors(pid)
		return err == nil && n <= before+200, nil
	})
	stopWatch()
	wg.Wait()

	t.Logf("descriptors: %d before, %d at peak (limit %d); %d queries sent, %d refused at once, %d reached the blackhole; up logged %d bytes",
		before, peak.Load(), blackholeNofile, sent, refused, asked.Load(), len(u.stderr.String()))
	if !u.running() {
		t.Fatalf("up died during the flood: %v", u.err)
	}
	if p := int(peak.Load()); p > before+blackholeBound {
		t.Errorf("descriptors went from %d to %d during the flood, want at most %d more", before, p, blackholeBound)
	}
	// At 2,500 a second for 8s, all but about 1000 in flight at a time
	// (each held 5s) are over the limit.
	if want := sent / 2; refused < want {
		t.Errorf("%d of %d queries refused at once, want at least %d", refused, sent, want)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if settled != nil {
		n, _ := openDescriptors(pid)
		t.Errorf("descriptors went from %d to %d and stayed there after the flood: %v", before, n, settled)
	}
	if log := u.stderr.String(); strings.Contains(log, "too many open files") {
		t.Errorf("up ran out of descriptors:\n%s", u.stderr.tail())
	}
}

// exchangeA asks addr for name's A record over UDP.
func exchangeA(addr, name string, timeout time.Duration) (*dns.Msg, error) {
	c := &dns.Client{Timeout: timeout}
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	r, _, err := c.Exchange(q, addr)
	return r, err
}

// floodUDP sends rate queries a second for distinct external names to
// addr for d, from one socket, and counts the REFUSED replies that come
// back within a second of their query (the forward plugin never gives up
// on a query that soon).
func floodUDP(ctx context.Context, addr string, rate int, d time.Duration) (sent, refused int, err error) {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	var sentAt sync.Map // id → time.Time
	var quick atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65535)
		for {
			_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			k, err := conn.Read(buf)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
					return // nothing for 2s after the last refusal
				}
				return
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:k]) != nil || m.Rcode != dns.RcodeRefused {
				continue
			}
			if at, ok := sentAt.Load(m.Id); ok && time.Since(at.(time.Time)) < time.Second {
				quick.Add(1)
			}
		}
	}()
	const tick = 10 * time.Millisecond
	perTick := max(1, rate*int(tick)/int(time.Second))
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	start := time.Now()
	for time.Since(start) < d {
		for range perTick {
			id := uint16(sent)
			m := new(dns.Msg)
			m.SetQuestion(fmt.Sprintf("q%d.flood.example.", sent), dns.TypeA)
			m.Id = id
			buf, perr := m.Pack()
			if perr != nil {
				return sent, 0, perr
			}
			sentAt.Store(id, time.Now())
			if _, werr := conn.Write(buf); werr != nil {
				return sent, 0, fmt.Errorf("query %d: %w", sent, werr)
			}
			sent++
		}
		select {
		case <-ctx.Done():
			return sent, int(quick.Load()), ctx.Err()
		case <-ticker.C:
		}
	}
	<-done
	return sent, int(quick.Load()), nil
}
