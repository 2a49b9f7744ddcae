package operator

import (
	"net/netip"
	"reflect"
	"testing"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/render"
)

func TestPublishedForwarders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		corefile string
		want     []render.Forwarder
	}{
		{"nothing published", "", nil},
		{"stub blocks and resolv.conf", `# ca-bundle dot sha256:00
foo.com:5353 {
    errors
    forward . 127.0.0.1:53 [2001:db8::1]:5353 {
        policy round_robin
    }
    cache 30
}

dot.example:5353 {
    forward . tls://192.0.2.1 tls://192.0.2.2:8853 {
        tls_servername dns.dot.example
    }
}

.:5353 {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
    }
    forward . /etc/resolv.conf 192.0.2.53 {
        policy sequential
    }
    reload
}
`, []render.Forwarder{
			{Domain: "foo.com", Addresses: []string{"127.0.0.1:53", "[2001:db8::1]:5353"}},
			{Domain: "dot.example", Addresses: []string{"192.0.2.1:853", "192.0.2.2:8853"}},
			{Domain: ".", Addresses: []string{"192.0.2.53:53"}, ResolvConf: true},
		}},
		{"one line, keys with scheme and commas, a forward without a block", "dns://A.example.:53, b.example:53 { forward . 192.0.2.9 }\n. { whoami }\n",
			[]render.Forwarder{{Domain: "a.example", Addresses: []string{"192.0.2.9:53"}}, {Domain: "b.example", Addresses: []string{"192.0.2.9:53"}}}},
		{"forward options are not nameservers", ".:53 {\n    forward . 192.0.2.1 {\n        except 192.0.2.2\n    }\n}\n",
			[]render.Forwarder{{Domain: ".", Addresses: []string{"192.0.2.1:53"}}}},
		{"no environment expansion", ".:53 {\n    forward . {$HOME}\n}\n",
			[]render.Forwarder{{Domain: ".", ResolvConf: true}}},
		{"unbalanced", ".:53 {\n    forward . 192.0.2.1\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := PublishedForwarders([]byte(tt.corefile)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PublishedForwarders = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPublishedForwardersOfRendered: for a Corefile the operator renders,
// the published forwarders are the renderer's.
func TestPublishedForwardersOfRendered(t *testing.T) {
	t.Parallel()
	spec := &operatorv1.DNSSpec{
		PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{
			{Domain: "foo.com", NameServers: []string{"127.0.0.1", "127.0.0.2:5353"}, Policy: operatorv1.ForwardPolicyRoundRobin},
			{Domain: "dot.example", NameServers: []string{"192.0.2.1", "[2001:db8::1]:853"}, TransportConfig: &operatorv1.DNSTransportConfig{
				Transport: operatorv1.TLSTransport, TLS: &operatorv1.DNSOverTLSConfig{ServerName: "dns.dot.example"}}},
		}},
		UpstreamResolvers: operatorv1.UpstreamResolvers{Upstreams: []operatorv1.Upstream{
			{Type: operatorv1.SystemResolvConfType}, {Type: operatorv1.NetworkResolverType, Address: "192.0.2.53"}}},
	}
	for _, o := range []render.Options{{}, {InProcess: true, SystemResolvers: []string{"10.0.0.1:53"}}} {
		text, _, err := render.Corefile(spec, o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := PublishedForwarders(text), render.Forwarders(spec, o); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: PublishedForwarders = %+v, want the renderer's %+v", o, got, want)
		}
	}
}

func FuzzPublishedForwarders(f *testing.F) {
	f.Add(".:53 {\n    forward . 192.0.2.1 tls://[2001:db8::1]:853 /etc/resolv.conf {\n        policy random\n    }\n}\n")
	f.Add("a:1, b { forward . } }} {{ \"quoted\nline\" forward")
	f.Fuzz(func(t *testing.T, corefile string) {
		for _, fw := range PublishedForwarders([]byte(corefile)) {
			if fw.Domain == "" {
				t.Errorf("a forwarder without a domain: %+v", fw)
			}
			for _, a := range fw.Addresses {
				if _, err := netip.ParseAddrPort(a); err != nil {
					t.Errorf("address %q is not IP:PORT: %v", a, err)
				}
			}
		}
	})
}
