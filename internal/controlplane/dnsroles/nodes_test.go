package dnsroles

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/controlplane"
)

var threeNodes = []string{"node-1", "node-2", "node-3"}

// TestChooseNodeCaches: with --nodes N each node's cache has its own
// address, the i-th after --nodecache-listen; a default one that is held
// moves on, past the addresses the cluster DNS and the nodes before it
// took; a given one is never moved.
func TestChooseNodeCaches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		nodeCache string
		def       bool
		held      map[string]bool
		want      []string
		wantErr   string
	}{
		{name: "defaults free", nodeCache: "127.0.20.10:53", def: true,
			want: []string{"127.0.20.10:53", "127.0.20.11:53", "127.0.20.12:53"}},
		{name: "node-1's held", nodeCache: "127.0.20.10:53", def: true, held: map[string]bool{"127.0.20.10:53": true},
			want: []string{"127.0.20.11:53", "127.0.20.12:53", "127.0.20.13:53"}},
		{name: "node-2's held", nodeCache: "127.0.20.10:53", def: true, held: map[string]bool{"127.0.20.11:53": true},
			want: []string{"127.0.20.10:53", "127.0.20.12:53", "127.0.20.13:53"}},
		{name: "given", nodeCache: "127.0.24.7:53", want: []string{"127.0.24.7:53", "127.0.24.8:53", "127.0.24.9:53"}},
		{name: "given and node-3's held", nodeCache: "127.0.24.7:53", held: map[string]bool{"127.0.24.9:53": true},
			wantErr: `node cache of node-3: 127.0.24.9:53 is already served by another process (--nodecache-listen picks another address, "" turns it off)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := New(Config{Listen: "127.0.10.10:53", NodeCacheListen: tt.nodeCache, NodeCacheDefault: tt.def, NodeNames: threeNodes,
				Upstreams: []string{"192.0.2.53"}})
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			err := r.chooseAddresses(nil, fakeProbe(tt.held, nil))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v; want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Components(controlplane.Cluster{Kubeconfig: "/d/kubeconfig"}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := range threeNodes {
				got = append(got, r.NodeCacheListenOf(i))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("node caches on %v; want %v", got, tt.want)
			}
			if r.NodeCacheListen() != tt.want[0] || r.NodeCacheListenOf(3) != "" {
				t.Errorf("NodeCacheListen() %q, NodeCacheListenOf(3) %q", r.NodeCacheListen(), r.NodeCacheListenOf(3))
			}
			// Every address chosen is one the DNS resource's forwarders
			// may not name.
			own := r.DNSAddresses()
			for _, a := range got {
				if !slices.Contains(own, netip.MustParseAddrPort(a)) {
					t.Errorf("%s is not among the own addresses %v", a, own)
				}
			}
		})
	}
}

func TestValidateNodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"three", func(*Config) {}, ""},
		{"leaves the /24", func(c *Config) { c.NodeCacheListen = "127.0.24.254:53" },
			"--nodecache-listen 127.0.24.254:53: the node caches of 3 nodes (--nodes) take it and the next 2 addresses, which leave its /24: choose a lower address"},
		{"holds the cluster DNS", func(c *Config) { c.Listen = "127.0.24.11:53" },
			`--nodecache-listen "127.0.24.10:53": the node caches of 3 nodes take 127.0.24.10:53 to 127.0.24.12:53, which holds the cluster DNS's address (--dns-listen 127.0.24.11:53): give each its own`},
		{"metrics", func(c *Config) { c.NodeCacheMetrics = "127.0.0.1:9253" },
			`--nodecache-metrics "127.0.0.1:9253": one address cannot serve the metrics of 3 node caches (--nodes): leave it out`},
		{"upstream in a later node's range", func(c *Config) { c.NodeCacheDefault = true; c.Upstreams = []string{"127.0.24.20"} },
			"upstream resolver 127.0.24.20 is an address of dnsplane itself"},
		{"no node caches", func(c *Config) { c.NodeCacheListen = "" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Config{Listen: "127.0.10.10:53", NodeCacheListen: "127.0.24.10:53", NodeNames: threeNodes, Upstreams: []string{"192.0.2.53"}}
			tt.mod(&c)
			err := New(c).Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
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

// TestNodeCachesGatedAndNamed: each node's cache is its own component,
// named for its node and wrapped by the Gate (`dnsplane node stop`); the
// banner lists them, the first line in the one-node form.
func TestNodeCachesGatedAndNamed(t *testing.T) {
	t.Parallel()
	var gated []string
	r := New(Config{Listen: "127.0.10.10:53", NodeCacheListen: "127.0.24.10:53", NodeNames: threeNodes, Upstreams: []string{"192.0.2.53"},
		Gate: func(node string, c controlplane.Component) controlplane.Component {
			gated = append(gated, node+"="+c.Name())
			return c
		}})
	cl := controlplane.Cluster{URL: "https://127.0.0.1:6443", Kubeconfig: "/d/kubeconfig"}
	comps, err := r.Components(cl)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range comps {
		names = append(names, c.Name())
	}
	if want := []string{"cluster-dns", "nodecache/node-1", "nodecache/node-2", "nodecache/node-3"}; !slices.Equal(names, want) {
		t.Errorf("components %v; want %v", names, want)
	}
	if want := []string{"node-1=nodecache/node-1", "node-2=nodecache/node-2", "node-3=nodecache/node-3"}; !slices.Equal(gated, want) {
		t.Errorf("gated %v; want %v", gated, want)
	}
	banner := r.Banner(cl)
	for _, want := range []string{"  node cache:  127.0.24.10:53 on node-1\n               127.0.24.11:53 on node-2\n               127.0.24.12:53 on node-3\n",
		"dig @127.0.24.10 kubernetes.default.svc.cluster.local"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}

	// One node: the component and banner `up` always had.
	one := New(Config{Listen: "127.0.10.10:53", NodeCacheListen: "127.0.20.10:53", Upstreams: []string{"192.0.2.53"},
		Gate: func(node string, c controlplane.Component) controlplane.Component {
			if node != "" {
				t.Errorf("one node cache gated as %q", node)
			}
			return c
		}})
	comps, err = one.Components(cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 2 || comps[1].Name() != "nodecache" {
		t.Errorf("one node: components %v", comps)
	}
	if b := one.Banner(cl); !strings.Contains(b, "  node cache:  127.0.20.10:53\n") {
		t.Errorf("one node banner:\n%s", b)
	}
}
