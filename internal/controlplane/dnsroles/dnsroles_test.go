package dnsroles

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dnsplane/dnsplane/internal/controlplane"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string // "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"no node cache", func(c *Config) { c.NodeCacheListen = "" }, ""},
		{"upper case domain", func(c *Config) { c.ClusterDomain = "Cluster.Local." }, ""},
		{"bad domain", func(c *Config) { c.ClusterDomain = "Bad_Domain" }, `--cluster-domain "Bad_Domain": a lowercase RFC 1123 subdomain must consist of`},
		{"option code", func(c *Config) { c.OptionCode = 10 }, "--option-code 10: want an EDNS0 local option code, 65001-65534"},
		{"dns listen", func(c *Config) { c.Listen = "localhost" }, `--dns-listen "localhost": want ADDR:PORT`},
		{"nodecache listen", func(c *Config) { c.NodeCacheListen = "127.0.0.1" }, `--nodecache-listen "127.0.0.1": want ADDR:PORT`},
		{"loop", func(c *Config) { c.Upstreams = []string{"127.0.0.1:1153"} }, "upstream resolver 127.0.0.1:1153 is an address of dnsplane itself (a forwarding loop); give --upstream"},
		{"loop via the cluster DNS's move range", func(c *Config) {
			c.Listen, c.ListenDefault = "127.0.10.10:53", true
			c.Upstreams = []string{"127.0.10.19"}
		}, "upstream resolver 127.0.10.19 is an address of dnsplane itself"},
		{"loop via the node cache's move range", func(c *Config) {
			c.NodeCacheListen, c.NodeCacheDefault = "127.0.20.10:53", true
			c.Upstreams = []string{"127.0.20.11:53"}
		}, "is an address of dnsplane itself"},
		{"past the move range", func(c *Config) {
			c.Listen, c.ListenDefault = "127.0.10.10:53", true
			c.Upstreams = []string{"127.0.10.20"}
		}, ""},
		{"given address does not move", func(c *Config) {
			c.Listen = "127.0.10.10:53"
			c.Upstreams = []string{"127.0.10.11"}
		}, ""},
		{"same address", func(c *Config) { c.NodeCacheListen = c.Listen }, `--nodecache-listen "127.0.0.1:10053": the cluster DNS's address too (--dns-listen): give each its own`},
		{"nodecache metrics", func(c *Config) { c.NodeCacheMetrics = "127.0.0.1:9253" }, ""},
		{"bad nodecache metrics", func(c *Config) { c.NodeCacheMetrics = ":x" }, `--nodecache-metrics ":x": want ADDR:PORT`},
		{"no upstream", func(c *Config) { c.Upstreams = nil }, "cluster DNS: no upstream resolver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Listen: "127.0.0.1:10053", NodeCacheListen: "127.0.0.1:1153", Upstreams: []string{"192.0.2.53"}}
			tt.mod(&c)
			err := New(c).Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate: %v; want %q", err, tt.want)
			}
			if _, ok := errors.AsType[*controlplane.ConfigError](err); !ok {
				t.Errorf("%T is not a *controlplane.ConfigError", err)
			}
		})
	}
}

func TestBanner(t *testing.T) {
	r := New(Config{Listen: "127.0.0.1:10053", ClusterDomain: "cluster.local."})
	cl := controlplane.Cluster{URL: "https://127.0.0.1:6443", Kubeconfig: "/d/kubeconfig"}
	if _, err := r.Components(cl); err != nil {
		t.Fatal(err)
	}
	want := `dnsplane is up
  API server:  https://127.0.0.1:6443
  kubeconfig:  /d/kubeconfig
  cluster DNS: 127.0.0.1:10053 (not port 53: pods' resolvers cannot reach it)
  node cache:  off

Try:
  export KUBECONFIG=/d/kubeconfig
  kubectl get nodes
  kubectl create deployment web --image=nginx --replicas=3
  dig @127.0.0.1 -p 10053 kubernetes.default.svc.cluster.local
  dig @127.0.0.1 -p 10053 kubernetes.search.default.cluster.local.ap.k8s.io   # autopath: CNAME to the Service
`
	if got := r.Banner(cl); got != want {
		t.Errorf("banner:\n%s\nwant:\n%s", got, want)
	}
}

// TestBannerPort53: dig needs no -p for port 53, and the export line can
// be pasted into a shell whatever the path.
func TestBannerPort53(t *testing.T) {
	t.Parallel()
	r := New(Config{Listen: "127.0.53.10:53", NodeCacheListen: "127.0.54.10:53"})
	cl := controlplane.Cluster{URL: "https://127.0.0.1:6443", Kubeconfig: "/home/me/my data/it's/kubeconfig"}
	if _, err := r.Components(cl); err != nil {
		t.Fatal(err)
	}
	b := r.Banner(cl)
	for _, want := range []string{"  kubeconfig:  /home/me/my data/it's/kubeconfig\n", "  cluster DNS: 127.0.53.10:53\n", "  node cache:  127.0.54.10:53\n",
		"  export KUBECONFIG='/home/me/my data/it'\\''s/kubeconfig'\n", "  dig @127.0.54.10 kubernetes.default.svc.cluster.local\n"} {
		if !strings.Contains(b, want) {
			t.Errorf("banner lacks %q:\n%s", want, b)
		}
	}
}

// TestBannerMoved: a server ChooseAddresses moved says from where, so
// that the user knows why the documented address answers differently.
func TestBannerMoved(t *testing.T) {
	r := New(Config{Listen: "127.0.10.10:53", ListenDefault: true, NodeCacheListen: "127.0.20.10:53", NodeCacheDefault: true,
		Upstreams: []string{"192.0.2.53"}})
	if err := r.chooseAddresses(nil, fakeProbe(map[string]bool{"127.0.20.10:53": true}, nil)); err != nil {
		t.Fatal(err)
	}
	cl := controlplane.Cluster{URL: "https://127.0.0.1:6443", Kubeconfig: "/d/kubeconfig"}
	if _, err := r.Components(cl); err != nil {
		t.Fatal(err)
	}
	got := r.Banner(cl)
	for _, want := range []string{"  cluster DNS: 127.0.10.10:53\n", "  node cache:  127.0.20.11:53 (127.0.20.10:53 is held by another process)\n",
		"dig @127.0.20.11 kubernetes.default.svc.cluster.local"} {
		if !strings.Contains(got, want) {
			t.Errorf("banner lacks %q:\n%s", want, got)
		}
	}
}

// fakeProbe fails with EADDRINUSE for held addresses and with errs[addr]
// where set.
func fakeProbe(held map[string]bool, errs map[string]error) probeFunc {
	return func(addr string) error {
		if err := errs[addr]; err != nil {
			return err
		}
		if held[addr] {
			return &net.OpError{Op: "listen", Net: "udp", Err: os.NewSyscallError("bind", syscall.EADDRINUSE)}
		}
		return nil
	}
}

// TestChooseAddresses: a default address another process holds moves to
// the next free one of its range on the same port, never to another port;
// an address the user gave is never moved; without the privilege for the
// port `up` refuses, naming both flags.
func TestChooseAddresses(t *testing.T) {
	eacces := &net.OpError{Op: "listen", Net: "udp", Err: os.NewSyscallError("bind", syscall.EACCES)}
	notHere := &net.OpError{Op: "listen", Net: "udp", Err: os.NewSyscallError("bind", syscall.EADDRNOTAVAIL)}
	allDNS := map[string]bool{}
	for _, a := range moveCandidates("127.0.10.10:53") {
		allDNS[a] = true
	}
	tests := []struct {
		name                    string
		listen, nodeCache       string
		listenDef, nodeCacheDef bool
		held                    map[string]bool
		errs                    map[string]error
		wantListen, wantNC      string
		wantErr                 []string
	}{
		{name: "defaults free", listen: "127.0.10.10:53", nodeCache: "127.0.20.10:53", listenDef: true, nodeCacheDef: true,
			wantListen: "127.0.10.10:53", wantNC: "127.0.20.10:53"},
		{name: "defaults held by another up", listen: "127.0.10.10:53", nodeCache: "127.0.20.10:53", listenDef: true, nodeCacheDef: true,
			held:       map[string]bool{"127.0.10.10:53": true, "127.0.20.10:53": true, "127.0.20.11:53": true},
			wantListen: "127.0.10.11:53", wantNC: "127.0.20.12:53"},
		{name: "whole range held", listen: "127.0.10.10:53", nodeCache: "127.0.20.10:53", listenDef: true, nodeCacheDef: true, held: allDNS,
			wantErr: []string{"cluster DNS: 127.0.10.10:53 to 127.0.10.19:53 are all taken by other processes", "give --dns-listen a free address on port 53"}},
		{name: "no privilege for port 53", listen: "127.0.10.10:53", nodeCache: "127.0.20.10:53", listenDef: true, nodeCacheDef: true,
			errs: map[string]error{"127.0.10.10:53": eacces},
			wantErr: []string{"cluster DNS: cannot listen on 127.0.10.10:53: port 53 needs root or CAP_NET_BIND_SERVICE",
				"--dns-listen and --nodecache-listen", "permission denied"}},
		{name: "no privilege, node cache", listen: "127.0.0.1:10053", nodeCache: "127.0.20.10:53", nodeCacheDef: true,
			errs:    map[string]error{"127.0.20.10:53": eacces},
			wantErr: []string{"node cache: cannot listen on 127.0.20.10:53: port 53 needs root", "--dns-listen and --nodecache-listen"}},
		{name: "given and held", listen: "127.0.10.10:53", nodeCache: "127.0.20.10:53", nodeCacheDef: true,
			held:    map[string]bool{"127.0.10.10:53": true},
			wantErr: []string{"cluster DNS: 127.0.10.10:53 is already served by another process (--dns-listen picks another address)"}},
		{name: "node cache given and held", listen: "127.0.10.10:53", nodeCache: "127.0.20.10:53", listenDef: true,
			held:    map[string]bool{"127.0.20.10:53": true},
			wantErr: []string{`node cache: 127.0.20.10:53 is already served by another process (--nodecache-listen picks another address, "" turns it off)`}},
		{name: "given, not on this host", listen: "192.0.2.1:53", errs: map[string]error{"192.0.2.1:53": notHere},
			wantErr: []string{"cluster DNS: --dns-listen 192.0.2.1:53: listen udp: bind: cannot assign requested address"}},
		{name: "given on another port", listen: "127.0.0.1:10053", nodeCache: "127.0.0.1:1053",
			wantListen: "127.0.0.1:10053", wantNC: "127.0.0.1:1053"},
		{name: "no node cache", listen: "127.0.10.10:53", listenDef: true, held: map[string]bool{"127.0.10.10:53": true},
			wantListen: "127.0.10.11:53"},
		{name: "node cache default avoids the cluster DNS's address", listen: "127.0.20.11:53", nodeCache: "127.0.20.10:53", nodeCacheDef: true,
			held: map[string]bool{"127.0.20.10:53": true}, wantListen: "127.0.20.11:53", wantNC: "127.0.20.12:53"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := New(Config{Listen: tt.listen, ListenDefault: tt.listenDef, NodeCacheListen: tt.nodeCache, NodeCacheDefault: tt.nodeCacheDef})
			var logged strings.Builder
			err := r.chooseAddresses(slog.New(slog.NewTextHandler(&logged, nil)), fakeProbe(tt.held, tt.errs))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("chose %s and %s; want an error", r.Listen(), r.cfg.NodeCacheListen)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Listen() != tt.wantListen || r.cfg.NodeCacheListen != tt.wantNC {
				t.Errorf("chose %q and %q; want %q and %q", r.Listen(), r.cfg.NodeCacheListen, tt.wantListen, tt.wantNC)
			}
			moved := r.Listen() != tt.listen || r.cfg.NodeCacheListen != tt.nodeCache
			if lines := strings.Count(logged.String(), "\n"); moved != (lines == 1) || lines > 1 {
				t.Errorf("moved %v, logged %d lines:\n%s", moved, lines, logged.String())
			}
		})
	}
}

// TestChooseAddressesRealSockets: the same with real sockets, on an
// ephemeral port so that no root is needed: a held default moves to the
// next address of its range.
func TestChooseAddressesRealSockets(t *testing.T) {
	held, err := net.ListenPacket("udp", "127.0.33.10:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.LocalAddr().String()
	port := held.LocalAddr().(*net.UDPAddr).Port
	r := New(Config{Listen: addr, ListenDefault: true})
	if err := r.ChooseAddresses(nil); err != nil {
		t.Fatal(err)
	}
	if want := net.JoinHostPort("127.0.33.11", strconv.Itoa(port)); r.Listen() != want {
		t.Errorf("Listen() = %s; want %s", r.Listen(), want)
	}
	given := New(Config{Listen: addr})
	// The holder is named from /proc: this test process.
	comm, _ := os.ReadFile("/proc/self/comm")
	want := fmt.Sprintf("cluster DNS: %s is already served by another process (%s, pid %d; --dns-listen picks another address)",
		addr, strings.TrimSpace(string(comm)), os.Getpid())
	if err := given.ChooseAddresses(nil); err == nil || err.Error() != want {
		t.Errorf("given and held: %v; want %s", err, want)
	}
}

func TestMoveCandidates(t *testing.T) {
	got := moveCandidates("127.0.10.10:53")
	if len(got) != MoveRange || got[0] != "127.0.10.10:53" || got[MoveRange-1] != "127.0.10.19:53" {
		t.Errorf("moveCandidates(127.0.10.10:53) = %v", got)
	}
	if got := moveCandidates("127.0.10.250:53"); len(got) != 6 || got[5] != "127.0.10.255:53" {
		t.Errorf("moveCandidates stays in the /24: %v", got)
	}
}

// TestMetricsAddressHeld: a --nodecache-metrics address another process
// holds is refused naming the flag and the holder (CoreDNS would only log
// it and serve without metrics).
func TestMetricsAddressHeld(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.53.60:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.Addr().String()
	comm, _ := os.ReadFile("/proc/self/comm")
	want := fmt.Sprintf("node cache metrics: %s is already in use by another process (%s, pid %d); choose another address with --nodecache-metrics, or leave it out",
		addr, strings.TrimSpace(string(comm)), os.Getpid())
	r := New(Config{Listen: "127.0.53.61:0", NodeCacheListen: "127.0.53.62:0", NodeCacheMetrics: addr})
	if err := r.ChooseAddresses(nil); err == nil || err.Error() != want {
		t.Errorf("ChooseAddresses: %v; want %s", err, want)
	}
	// Without a node cache nothing serves the metrics: nothing to refuse.
	r = New(Config{Listen: "127.0.53.61:0", NodeCacheMetrics: addr})
	if err := r.ChooseAddresses(nil); err != nil {
		t.Errorf("ChooseAddresses without a node cache: %v", err)
	}
}
