package corefile

import (
	"strings"
	"testing"
)

func TestNodeCacheCorefile(t *testing.T) {
	tests := []struct {
		name    string
		o       NodeCacheOptions
		want    string
		wantErr string
	}{
		{
			name: "minimal",
			o:    NodeCacheOptions{Listen: []string{"127.0.0.1:53"}, ClusterDNS: []string{"10.96.0.10:53"}},
			want: `cluster.local:53 ap.k8s.io:53 in-addr.arpa:53 ip6.arpa:53 {
    errors
    bind 127.0.0.1
    loopguard
    warmstack
    searchopt cluster.local {
        code 65534
        resolv_conf /dev/null
    }
    cache 30
    forward . 10.96.0.10:53 {
        force_tcp
        max_concurrent 1000
    }
}

.:53 {
    errors
    bind 127.0.0.1
    loopguard
    warmstack
    searchopt cluster.local {
        code 65534
        resolv_conf /dev/null
    }
    cache 30
    forward . 10.96.0.10:53 {
        prefer_udp
        max_concurrent 1000
    }
}
`,
		},
		{
			name: "everything",
			o: NodeCacheOptions{
				Listen:        []string{"169.254.20.10:53", "10.96.0.10:53", "127.0.0.1:5353"},
				ClusterDNS:    []string{"10.0.0.1:53", "[fd00::1]:5353"},
				ClusterDomain: "Corp.Example.",
				OptionCode:    65100,
				HostSearch:    []string{"foo.com", "bar.com"},
				CacheTTL:      60,
				Health:        "127.0.0.1:8080",
				Ready:         ":8181",
				Metrics:       "127.0.0.1:9253",
				Log:           true,
			},
			want: `corp.example:53 ap.k8s.io:53 in-addr.arpa:53 ip6.arpa:53 {
    errors
    log
    bind 169.254.20.10 10.96.0.10
    loopguard
    warmstack
    health 127.0.0.1:8080
    ready :8181
    prometheus 127.0.0.1:9253
    searchopt corp.example {
        code 65100
        host_search foo.com bar.com
    }
    cache 60
    forward . 10.0.0.1:53 [fd00::1]:5353 {
        force_tcp
        max_concurrent 1000
    }
}

.:53 {
    errors
    log
    bind 169.254.20.10 10.96.0.10
    loopguard
    warmstack
    prometheus 127.0.0.1:9253
    searchopt corp.example {
        code 65100
        host_search foo.com bar.com
    }
    cache 60
    forward . 10.0.0.1:53 [fd00::1]:5353 {
        prefer_udp
        max_concurrent 1000
    }
}

corp.example:5353 ap.k8s.io:5353 in-addr.arpa:5353 ip6.arpa:5353 {
    errors
    log
    bind 127.0.0.1
    loopguard
    warmstack
    prometheus 127.0.0.1:9253
    searchopt corp.example {
        code 65100
        host_search foo.com bar.com
    }
    cache 60
    forward . 10.0.0.1:53 [fd00::1]:5353 {
        force_tcp
        max_concurrent 1000
    }
}

.:5353 {
    errors
    log
    bind 127.0.0.1
    loopguard
    warmstack
    prometheus 127.0.0.1:9253
    searchopt corp.example {
        code 65100
        host_search foo.com bar.com
    }
    cache 60
    forward . 10.0.0.1:53 [fd00::1]:5353 {
        prefer_udp
        max_concurrent 1000
    }
}
`,
		},
		{
			name: "no cache",
			o:    NodeCacheOptions{Listen: []string{"127.0.0.1:53"}, ClusterDNS: []string{"10.96.0.10:53"}, CacheTTL: 60, NoCache: true},
			want: `cluster.local:53 ap.k8s.io:53 in-addr.arpa:53 ip6.arpa:53 {
    errors
    bind 127.0.0.1
    loopguard
    warmstack
    searchopt cluster.local {
        code 65534
        resolv_conf /dev/null
    }
    forward . 10.96.0.10:53 {
        force_tcp
        max_concurrent 1000
    }
}

.:53 {
    errors
    bind 127.0.0.1
    loopguard
    warmstack
    searchopt cluster.local {
        code 65534
        resolv_conf /dev/null
    }
    forward . 10.96.0.10:53 {
        prefer_udp
        max_concurrent 1000
    }
}
`,
		},
		{name: "no listen", o: NodeCacheOptions{ClusterDNS: []string{"10.0.0.1:53"}}, wantErr: "no listen address"},
		{name: "no cluster dns", o: NodeCacheOptions{Listen: []string{"127.0.0.1:53"}}, wantErr: "no cluster DNS"},
		{name: "listen without port", o: NodeCacheOptions{Listen: []string{"127.0.0.1"}, ClusterDNS: []string{"10.0.0.1:53"}}, wantErr: "want ADDR:PORT"},
		{name: "cluster dns hostname", o: NodeCacheOptions{Listen: []string{"127.0.0.1:53"}, ClusterDNS: []string{"kube-dns:53"}}, wantErr: "cluster DNS address"},
		{name: "bad health", o: NodeCacheOptions{Listen: []string{"127.0.0.1:53"}, ClusterDNS: []string{"10.0.0.1:53"}, Health: "8080"}, wantErr: "health address"},
		{name: "search injection", o: NodeCacheOptions{Listen: []string{"127.0.0.1:53"}, ClusterDNS: []string{"10.0.0.1:53"}, HostSearch: []string{"a.com}\n. {"}}, wantErr: "metacharacter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NodeCache(tt.o)
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
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
