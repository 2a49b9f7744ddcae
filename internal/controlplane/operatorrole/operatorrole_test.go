package operatorrole

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dnsplane/dnsplane/api/client/clientset/versioned"
	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestDNSAddresses: the API server is told the cluster DNS Service's
// address, so that a DNS resource forwarding there is refused (issue 29:
// 10.96.0.10 was accepted).
func TestDNSAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		serviceRange string
		want         []netip.AddrPort
	}{
		{"10.96.0.0/12", []netip.AddrPort{netip.MustParseAddrPort("10.96.0.10:53")}},
		{"10.0.0.0/24", []netip.AddrPort{netip.MustParseAddrPort("10.0.0.10:53")}},
		{"fd00:10:96::/112", []netip.AddrPort{netip.MustParseAddrPort("[fd00:10:96::a]:53")}},
		{"10.0.0.0/29", nil}, // too small: Validate reports it
		{"nonsense", nil},
	}
	for _, tt := range tests {
		t.Run(tt.serviceRange, func(t *testing.T) {
			t.Parallel()
			var r controlplane.DNSAddresser = New(Config{ServiceRange: tt.serviceRange})
			if got := r.DNSAddresses(); !slices.Equal(got, tt.want) {
				t.Errorf("DNSAddresses() = %v, want %v", got, tt.want)
			}
		})
	}
}

// addressesOnly is the role's DNSAddresses without its operator, which
// this test does not need.
type addressesOnly struct{ r *Role }

func (addressesOnly) Validate() error { return nil }
func (addressesOnly) Components(controlplane.Cluster) ([]controlplane.Component, error) {
	return nil, nil
}
func (a addressesOnly) DNSAddresses() []netip.AddrPort { return a.r.DNSAddresses() }

// TestAPIRefusesServiceAddress: in `up`, a DNS resource whose upstream
// resolver or forward plugin names the cluster DNS Service's address
// (10.96.0.10) is refused with a 422 naming the field, as
// docs/dns-operator.md says; before, the API server stored it and only
// the operator left it out.
func TestAPIRefusesServiceAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Roles: []controlplane.Role{
		addressesOnly{New(Config{ServiceRange: "10.96.0.0/12"})},
	}})
	client := versioned.NewForConfigOrDie(ts.ClientConfig).OperatorV1().DNSes()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		spec operatorv1.DNSSpec
		msg  string
	}{
		{"upstream resolver", operatorv1.DNSSpec{UpstreamResolvers: operatorv1.UpstreamResolvers{Upstreams: []operatorv1.Upstream{
			{Type: operatorv1.NetworkResolverType, Address: "10.96.0.10"}}}},
			`DNS.operator.dnsplane.io "default" is invalid: spec.upstreamResolvers.upstreams[0]: Invalid value: "10.96.0.10:53": must not be 10.96.0.10:53, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`},
		{"forward plugin", operatorv1.DNSSpec{PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{
			{Domain: "corp.example", NameServers: []string{"192.0.2.1", "10.96.0.10:53"}}}}},
			`DNS.operator.dnsplane.io "default" is invalid: spec.pluginConfig.forwardPlugins[0].nameServers[1]: Invalid value: "10.96.0.10:53": must not be 10.96.0.10:53, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`},
	} {
		_, err := client.Create(ctx, &operatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.DefaultName}, Spec: tc.spec}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || err.Error() != tc.msg {
			t.Errorf("%s: create: %v,\nwant 422 %q", tc.name, err, tc.msg)
		}
	}
	// Another port of the address is another server.
	if _, err := client.Create(ctx, &operatorv1.DNS{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.DefaultName},
		Spec: operatorv1.DNSSpec{UpstreamResolvers: operatorv1.UpstreamResolvers{Upstreams: []operatorv1.Upstream{
			{Type: operatorv1.NetworkResolverType, Address: "10.96.0.10", Port: 5353}}}}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("10.96.0.10:5353: %v", err)
	}
}
