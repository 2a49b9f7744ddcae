package dnsroles

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/coredns"
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
		{"loop via fallback", func(c *Config) { c.Upstreams = []string{"127.0.0.1:1053"} }, "is an address of dnsplane itself"},
		{"loop via cluster DNS fallback", func(c *Config) {
			c.ListenFallback = "127.0.0.1:10054"
			c.Upstreams = []string{"127.0.0.1:10054"}
		}, "is an address of dnsplane itself"},
		{"nodecache metrics", func(c *Config) { c.NodeCacheMetrics = "127.0.0.1:9253" }, ""},
		{"bad nodecache metrics", func(c *Config) { c.NodeCacheMetrics = ":x" }, `--nodecache-metrics ":x": want ADDR:PORT`},
		{"no upstream", func(c *Config) { c.Upstreams = nil }, "cluster DNS: no upstream resolver"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Listen: "127.0.0.1:10053", NodeCacheListen: "127.0.0.1:1153", NodeCacheFallback: "127.0.0.1:1053",
				Upstreams: []string{"192.0.2.53"}}
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

// TestFallbackOK: the node cache's default address falls back when port
// 53 is taken or not permitted, never for other errors.
func TestFallbackOK(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	err = coredns.CanListen(pc.LocalAddr().String())
	if err == nil || !fallbackOK(err) {
		t.Errorf("CanListen on a taken port: %v; want EADDRINUSE, which falls back", err)
	}
	if err := coredns.CanListen("192.0.2.1:53"); err == nil || fallbackOK(err) {
		t.Errorf("CanListen on an address not on this host: %v; want an error that does not fall back", err)
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
  cluster DNS: 127.0.0.1:10053
  node cache:  off

Try:
  kubectl --kubeconfig /d/kubeconfig get namespaces
  dig @127.0.0.1 -p 10053 kubernetes.default.svc.cluster.local
  dig @127.0.0.1 -p 10053 kubernetes.search.default.cluster.local.ap.k8s.io   # autopath: CNAME to the Service
`
	if got := r.Banner(cl); got != want {
		t.Errorf("banner:\n%s\nwant:\n%s", got, want)
	}
}

// TestListenFallback: `up` on its defaults moves the cluster DNS to the
// fallback address when the default is taken, and only then; an address
// the user gave (no fallback) is kept, so its start fails with a message
// naming the flag instead.
func TestListenFallback(t *testing.T) {
	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	busy := taken.LocalAddr().String()
	for _, tc := range []struct {
		name, listen, fallback, want string
	}{
		{"default free", "127.0.0.1:0", "127.0.0.1:1", "127.0.0.1:0"},
		{"default taken", busy, "127.0.0.1:0", "127.0.0.1:0"},
		{"flag given, taken", busy, "", busy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(Config{Listen: tc.listen, ListenFallback: tc.fallback})
			if got := r.Listen(); got != tc.want {
				t.Errorf("Listen() = %q, want %q", got, tc.want)
			}
			ro, err := r.RenderOptions(nil)
			if err != nil {
				t.Fatal(err)
			}
			if ro.Listen != tc.want {
				t.Errorf("RenderOptions().Listen = %q, want %q", ro.Listen, tc.want)
			}
		})
	}
}
