package dnsspec

import (
	"net/netip"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

func TestValidateNotOwn(t *testing.T) {
	t.Parallel()
	own := []netip.AddrPort{netip.MustParseAddrPort("10.96.0.10:53"), netip.MustParseAddrPort("127.0.0.1:1053"), netip.MustParseAddrPort("[2001:db8::a]:53")}
	fp := func(ns ...string) operatorv1.ForwardPlugin {
		return operatorv1.ForwardPlugin{Domain: "fwd.test", NameServers: ns}
	}
	spec := func(fps []operatorv1.ForwardPlugin, ups ...operatorv1.Upstream) *operatorv1.DNSSpec {
		return &operatorv1.DNSSpec{PluginConfig: operatorv1.PluginConfig{ForwardPlugins: fps}, UpstreamResolvers: operatorv1.UpstreamResolvers{Upstreams: ups}}
	}
	network := func(a string, port int32) operatorv1.Upstream {
		return operatorv1.Upstream{Type: operatorv1.NetworkResolverType, Address: a, Port: port}
	}
	tests := []struct {
		name string
		spec *operatorv1.DNSSpec
		old  *operatorv1.DNSSpec
		own  []netip.AddrPort
		want []string
	}{
		{"none", spec([]operatorv1.ForwardPlugin{fp("192.0.2.1")}, network("192.0.2.53", 0)), nil, own, nil},
		{"no own addresses known", spec([]operatorv1.ForwardPlugin{fp("10.96.0.10")}), nil, nil, nil},
		{"default port", spec([]operatorv1.ForwardPlugin{fp("192.0.2.1", "10.96.0.10")}), nil, own,
			[]string{`spec.pluginConfig.forwardPlugins[0].nameServers[1]: Invalid value: "10.96.0.10": must not be 10.96.0.10:53`}},
		{"explicit port", spec([]operatorv1.ForwardPlugin{fp("127.0.0.1:1053")}), nil, own,
			[]string{`spec.pluginConfig.forwardPlugins[0].nameServers[0]: Invalid value: "127.0.0.1:1053"`}},
		{"IPv6", spec([]operatorv1.ForwardPlugin{fp("[2001:db8::a]:53")}), nil, own,
			[]string{`nameServers[0]: Invalid value: "[2001:db8::a]:53"`}},
		{"other port", spec([]operatorv1.ForwardPlugin{fp("10.96.0.10:5353", "127.0.0.1")}), nil, own, nil},
		{"upstream", spec(nil, network("192.0.2.53", 0), network("127.0.0.1", 1053)), nil, own,
			[]string{`spec.upstreamResolvers.upstreams[1]: Invalid value: "127.0.0.1:1053"`}},
		{"invalid entries left to the other rules", spec([]operatorv1.ForwardPlugin{fp("10.096.0.10", "x")}, network("10.96.0.10", 70000)), nil, own, nil},
		{"unchanged on update: not checked again", spec([]operatorv1.ForwardPlugin{fp("10.96.0.10")}, network("127.0.0.1", 1053)),
			spec([]operatorv1.ForwardPlugin{fp("10.96.0.10")}, network("127.0.0.1", 1053)), own, nil},
		{"changed on update", spec([]operatorv1.ForwardPlugin{fp("10.96.0.10", "192.0.2.1")}), spec([]operatorv1.ForwardPlugin{fp("10.96.0.10")}), own,
			[]string{`spec.pluginConfig.forwardPlugins[0].nameServers[0]`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateNotOwn(tc.spec, tc.old, tc.own, field.NewPath("spec"))
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d", errs, len(tc.want))
			}
			for i, e := range errs {
				if !strings.Contains(e.Error(), tc.want[i]) {
					t.Errorf("error %q, want it to contain %q", e.Error(), tc.want[i])
				}
			}
		})
	}
}
