package corefile

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestClusterDNSCorefile(t *testing.T) {
	base := ClusterDNSOptions{
		Listen:     "127.0.0.1:10053",
		Kubeconfig: "/var/lib/dnsplane/kubeconfig",
		Upstreams:  []string{"192.0.2.53", "[2001:db8::53]:5353"},
	}
	tests := []struct {
		name    string
		mod     func(*ClusterDNSOptions)
		want    string
		wantErr string
	}{
		{name: "defaults", mod: func(*ClusterDNSOptions) {}, want: `.:10053 {
    errors
    bind 127.0.0.1
    loopguard
    warmstack
    searchexpand cluster.local {
        code 65534
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig /var/lib/dnsplane/kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . 192.0.2.53:53 [2001:db8::53]:5353 {
        prefer_udp
        max_concurrent 1000
    }
    cache 30
}
`},
		{name: "everything", mod: func(o *ClusterDNSOptions) {
			o.ClusterDomain = "Corp.Cluster."
			o.OptionCode = 65001
			o.Trusted = []string{"10.0.0.0/16", "192.0.2.7"}
			o.CacheTTL = 5
			o.Health, o.Ready, o.Metrics = "127.0.0.1:8080", "127.0.0.1:8181", ":9153"
			o.Log = true
		}, want: `.:10053 {
    errors
    log
    bind 127.0.0.1
    loopguard
    warmstack
    health 127.0.0.1:8080 {
        lameduck 5s
    }
    ready 127.0.0.1:8181
    prometheus :9153
    searchexpand corp.cluster {
        code 65001
        trusted 10.0.0.0/16 192.0.2.7/32
    }
    kubernetes corp.cluster in-addr.arpa ip6.arpa {
        kubeconfig /var/lib/dnsplane/kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . 192.0.2.53:53 [2001:db8::53]:5353 {
        prefer_udp
        max_concurrent 1000
    }
    cache 5
}
`},
		{name: "trusted none", mod: func(o *ClusterDNSOptions) { o.Trusted = []string{TrustNone} }, want: `.:10053 {
    errors
    bind 127.0.0.1
    loopguard
    warmstack
    searchexpand cluster.local {
        code 65534
        trusted none
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig /var/lib/dnsplane/kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . 192.0.2.53:53 [2001:db8::53]:5353 {
        prefer_udp
        max_concurrent 1000
    }
    cache 30
}
`},
		// The DaemonSet shape the DNS operator renders: every address,
		// in-cluster API access, stub domains, TLS, policies, classes.
		{name: "operator shape", mod: func(o *ClusterDNSOptions) {
			o.Listen, o.Kubeconfig, o.InCluster = ":5353", "", true
			o.Upstreams = []string{ResolvConf, "2001:DB8::53"}
			o.Forward = ForwardOptions{Policy: "sequential"}
			o.Stubs = []StubDomain{
				{Domain: "foo.com", Upstreams: []string{"192.0.2.1", "[2001:db8::1]:5353"}, Forward: ForwardOptions{Policy: "round_robin"}},
				{Domain: "Bar.COM.", Upstreams: []string{"192.0.2.2"}, Forward: ForwardOptions{TLS: true, TLSServerName: "dns.bar.com", TLSCAFile: "/etc/ca/bar/ca-bundle.crt", ForceTCP: true}},
				{Domain: "baz.com", Upstreams: []string{"192.0.2.3:8853"}, Forward: ForwardOptions{TLS: true, TLSServerName: "dns.baz.com"}},
			}
			o.CacheTTL, o.DenialTTL = 900, 30
			o.LogClasses = []string{"denial", "error"}
			o.Health, o.Ready, o.Metrics = ":8080", ":8181", ":9153"
			o.Reload, o.Loop = true, true
		}, want: `foo.com:5353 {
    errors
    log . {
        class denial error
    }
    loopguard
    warmstack
    prometheus :9153
    forward . 192.0.2.1:53 [2001:db8::1]:5353 {
        policy round_robin
        prefer_udp
        max_concurrent 1000
    }
    cache 900 {
        denial 9984 30
    }
}

bar.com:5353 {
    errors
    log . {
        class denial error
    }
    loopguard
    warmstack
    prometheus :9153
    forward . tls://192.0.2.2:853 {
        tls_servername dns.bar.com
        tls /etc/ca/bar/ca-bundle.crt
        force_tcp
        max_concurrent 1000
    }
    cache 900 {
        denial 9984 30
    }
}

baz.com:5353 {
    errors
    log . {
        class denial error
    }
    loopguard
    warmstack
    prometheus :9153
    forward . tls://192.0.2.3:8853 {
        tls_servername dns.baz.com
        tls
        max_concurrent 1000
    }
    cache 900 {
        denial 9984 30
    }
}

.:5353 {
    errors
    log . {
        class denial error
    }
    loopguard
    warmstack
    health :8080 {
        lameduck 5s
    }
    ready :8181
    prometheus :9153
    searchexpand cluster.local {
        code 65534
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf [2001:db8::53]:53 {
        policy sequential
        prefer_udp
        max_concurrent 1000
    }
    cache 900 {
        denial 9984 30
    }
    reload
    loop
}
`},
		{name: "endpoint", mod: func(o *ClusterDNSOptions) {
			o.Kubeconfig, o.Endpoint = "", "https://127.0.0.1:6443"
			o.Upstreams = []string{"192.0.2.53"}
			o.CacheTTL, o.DenialTTL = 30, 30
			o.Forward.ForceTCP = true
		}, want: `.:10053 {
    errors
    bind 127.0.0.1
    loopguard
    warmstack
    searchexpand cluster.local {
        code 65534
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint https://127.0.0.1:6443
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . 192.0.2.53:53 {
        force_tcp
        max_concurrent 1000
    }
    cache 30
}
`},
		{name: "kubeconfig and in-cluster", mod: func(o *ClusterDNSOptions) { o.InCluster = true }, wantErr: "more than one of kubeconfig, endpoint and in-cluster"},
		{name: "listen port only, bad", mod: func(o *ClusterDNSOptions) { o.Listen = ":dns" }, wantErr: `listen address ":dns": want ADDR:PORT or :PORT`},
		{name: "resolv.conf over TLS", mod: func(o *ClusterDNSOptions) {
			o.Upstreams = []string{ResolvConf}
			o.Forward = ForwardOptions{TLS: true, TLSServerName: "dns.example"}
		}, wantErr: "upstream /etc/resolv.conf cannot be used over TLS"},
		{name: "TLS without server name", mod: func(o *ClusterDNSOptions) { o.Forward = ForwardOptions{TLS: true} }, wantErr: "TLS without a server name"},
		{name: "server name without TLS", mod: func(o *ClusterDNSOptions) { o.Forward = ForwardOptions{TLSServerName: "x"} }, wantErr: "without TLS"},
		{name: "bad policy", mod: func(o *ClusterDNSOptions) { o.Forward.Policy = "Random" }, wantErr: `forward policy "Random": want one of random, round_robin, sequential`},
		{name: "bad log class", mod: func(o *ClusterDNSOptions) { o.LogClasses = []string{"errors"} }, wantErr: `log class "errors"`},
		{name: "stub twice", mod: func(o *ClusterDNSOptions) {
			o.Stubs = []StubDomain{{Domain: "foo.com", Upstreams: []string{"192.0.2.1"}}, {Domain: "FOO.com", Upstreams: []string{"192.0.2.2"}}}
		}, wantErr: `stub domain "FOO.com": defined twice`},
		{name: "stub for the cluster domain", mod: func(o *ClusterDNSOptions) {
			o.Stubs = []StubDomain{{Domain: "cluster.local", Upstreams: []string{"192.0.2.1"}}}
		}, wantErr: `stub domain "cluster.local": defined twice`},
		{name: "stub without upstreams", mod: func(o *ClusterDNSOptions) { o.Stubs = []StubDomain{{Domain: "foo.com"}} }, wantErr: `stub domain "foo.com": no upstream`},
		{name: "stub bad upstream", mod: func(o *ClusterDNSOptions) {
			o.Stubs = []StubDomain{{Domain: "foo.com", Upstreams: []string{"ns.foo.com"}}}
		}, wantErr: `stub domain "foo.com": upstream "ns.foo.com": want ADDR[:PORT]`},
		{name: "stub zone with a space", mod: func(o *ClusterDNSOptions) {
			o.Stubs = []StubDomain{{Domain: "foo com", Upstreams: []string{"192.0.2.1"}}}
		}, wantErr: "stub domain"},
		{name: "trusted none with a prefix", mod: func(o *ClusterDNSOptions) { o.Trusted = []string{"10.0.0.0/8", TrustNone} }, wantErr: `trusted "none" cannot be combined with prefixes`},
		{name: "listen without port", mod: func(o *ClusterDNSOptions) { o.Listen = "127.0.0.1" }, wantErr: `listen address "127.0.0.1": want ADDR:PORT or :PORT`},
		{name: "no kubeconfig", mod: func(o *ClusterDNSOptions) { o.Kubeconfig = "" }, wantErr: "no kubeconfig"},
		{name: "kubeconfig with a space", mod: func(o *ClusterDNSOptions) { o.Kubeconfig = "/my dir/kubeconfig" }, wantErr: "contains whitespace or a Corefile metacharacter"},
		{name: "kubeconfig closing the block", mod: func(o *ClusterDNSOptions) { o.Kubeconfig = "/x}\nforward" }, wantErr: "Corefile metacharacter"},
		{name: "no upstream", mod: func(o *ClusterDNSOptions) { o.Upstreams = nil }, wantErr: "no upstream resolver"},
		{name: "bad upstream", mod: func(o *ClusterDNSOptions) { o.Upstreams = []string{"dns.example"} }, wantErr: `upstream "dns.example": want ADDR[:PORT]`},
		{name: "bad trusted", mod: func(o *ClusterDNSOptions) { o.Trusted = []string{"10.0.0.0/33"} }, wantErr: `trusted prefix "10.0.0.0/33"`},
		{name: "bad cluster domain", mod: func(o *ClusterDNSOptions) { o.ClusterDomain = "a b" }, wantErr: "Corefile metacharacter"},
		{name: "bad metrics", mod: func(o *ClusterDNSOptions) { o.Metrics = "9153" }, wantErr: `metrics address "9153"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			o.Upstreams = append([]string(nil), base.Upstreams...)
			tt.mod(&o)
			got, err := ClusterDNS(o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Corefile:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestNodeCacheTrusted: the trusted address is the one the kernel sends
// from towards the cluster DNS, not the node cache's listen address: on
// loopback, 127.0.0.1 for any 127/8 destination (Linux routes the whole
// block through lo with that source). Without a node cache, no one.
func TestNodeCacheTrusted(t *testing.T) {
	type trustedCase struct {
		clusterDNS string
		nodeCache  bool
		want       []string
		wantErr    string
	}
	cases := []trustedCase{
		{"127.0.0.1:10053", true, []string{"127.0.0.1"}, ""},
		{"127.0.0.1:10053", false, []string{TrustNone}, ""},
		{"127.0.0.1", true, nil, `address "127.0.0.1": want ADDR:PORT`},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, []trustedCase{
			{"127.0.0.2:10053", true, []string{"127.0.0.1"}, ""},
			{"0.0.0.0:10053", true, []string{"127.0.0.1"}, ""},
		}...)
	}
	for _, tt := range cases {
		got, err := NodeCacheTrusted(tt.clusterDNS, tt.nodeCache)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NodeCacheTrusted(%q, %v) error %v, want %q", tt.clusterDNS, tt.nodeCache, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("NodeCacheTrusted(%q, %v) = %v, %v; want %v", tt.clusterDNS, tt.nodeCache, got, err, tt.want)
		}
	}
	if a, err := ForwardSource("[::1]:10053"); err == nil && a.String() != "::1" {
		t.Errorf("ForwardSource([::1]:10053) = %s, want ::1", a)
	}
}

// TestClusterDNSHostSearch: the host search list reaches searchexpand's
// host_search, and nothing is written without one.
func TestClusterDNSHostSearch(t *testing.T) {
	base := ClusterDNSOptions{Listen: "127.0.0.1:10053", Upstreams: []string{"192.0.2.53"}, Kubeconfig: "/k"}
	text, err := ClusterDNS(base)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "host_search") {
		t.Errorf("host_search without a host search list:\n%s", text)
	}
	base.HostSearch = []string{"corp.example", "example.net"}
	if text, err = ClusterDNS(base); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "host_search corp.example example.net\n") {
		t.Errorf("no host_search line:\n%s", text)
	}
}

// TestLoopguardEveryBlock: every server block of both Corefiles has
// loopguard, and its marker never takes the search list option's code.
func TestLoopguardEveryBlock(t *testing.T) {
	t.Parallel()
	for _, code := range []uint16{0, 65001, 65533} {
		cluster, err := ClusterDNS(ClusterDNSOptions{Listen: ":53", InCluster: true, OptionCode: code, Upstreams: []string{"192.0.2.1"},
			Stubs: []StubDomain{{Domain: "a.test", Upstreams: []string{"192.0.2.2"}}}})
		if err != nil {
			t.Fatal(err)
		}
		node, err := NodeCache(NodeCacheOptions{Listen: []string{"127.0.0.1:53", "127.0.0.2:5353"}, ClusterDNS: []string{"10.96.0.10:53"},
			OptionCode: code})
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{cluster, node} {
			blocks := strings.Count(text, "\n}\n")
			if n := strings.Count(text, "\n    loopguard"); n != blocks {
				t.Errorf("code %d: %d loopguard lines in %d blocks:\n%s", code, n, blocks, text)
			}
			if code == 65533 && !strings.Contains(text, "loopguard {\n        code 65532\n    }") {
				t.Errorf("code %d: loopguard keeps 65533:\n%s", code, text)
			}
		}
	}
}

func TestReverseZones(t *testing.T) {
	t.Parallel()
	for zone, want := range map[string][]string{
		"in-addr.arpa":             {"in-addr.arpa"},
		"10.in-addr.arpa":          {"10.in-addr.arpa"},
		"8.b.d.0.1.0.0.2.ip6.arpa": {"8.b.d.0.1.0.0.2.ip6.arpa"},
		"ip6.arpa":                 {"ip6.arpa"},
		"arpa":                     {"in-addr.arpa", "ip6.arpa"},
		"example.com":              nil,
		"xin-addr.arpa":            nil,
		"addr.arpa":                nil,
	} {
		if got := ReverseZones(zone); !slices.Equal(got, want) {
			t.Errorf("ReverseZones(%q) = %q, want %q", zone, got, want)
		}
	}
}

// TestReverseStubKeepsClusterPTR: a stub domain over a reverse zone gets
// the kubernetes plugin for that zone, falling through to its forward.
func TestReverseStubKeepsClusterPTR(t *testing.T) {
	t.Parallel()
	got, err := ClusterDNS(ClusterDNSOptions{Listen: ":5353", Kubeconfig: "/k", Upstreams: []string{"192.0.2.1"},
		Stubs: []StubDomain{{Domain: "10.in-addr.arpa", Upstreams: []string{"192.0.2.2"}}, {Domain: "arpa", Upstreams: []string{"192.0.2.3"}}, {Domain: "a.test", Upstreams: []string{"192.0.2.4"}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`10.in-addr.arpa:5353 {
    errors
    loopguard
    warmstack
    kubernetes cluster.local 10.in-addr.arpa {
        kubeconfig /k
        pods insecure
        fallthrough 10.in-addr.arpa
    }
    forward . 192.0.2.2:53 {`, `arpa:5353 {
    errors
    loopguard
    warmstack
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig /k
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . 192.0.2.3:53 {`, `a.test:5353 {
    errors
    loopguard
    warmstack
    forward . 192.0.2.4:53 {`} {
		if !strings.Contains(got, want) {
			t.Errorf("Corefile lacks\n%s\nin\n%s", want, got)
		}
	}
}
