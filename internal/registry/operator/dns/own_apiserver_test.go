package dns_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// dnsRole stands for `up`'s DNS roles: it serves DNS on addrs.
type dnsRole struct{ addrs []netip.AddrPort }

func (dnsRole) Validate() error                                                   { return nil }
func (dnsRole) Components(controlplane.Cluster) ([]controlplane.Component, error) { return nil, nil }
func (r dnsRole) DNSAddresses() []netip.AddrPort                                  { return r.addrs }

// TestDNSNamingOwnAddressRefused: in a control plane that serves DNS
// (`up`), a DNS whose forward plugin or upstream resolver names an
// address it serves DNS on is refused with a 422 naming the field, as
// `kubectl apply` shows it; another port of that address is accepted.
func TestDNSNamingOwnAddressRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	ts := controlplanetest.StartTestServer(t, controlplane.Config{Roles: []controlplane.Role{
		dnsRole{addrs: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:53"), netip.MustParseAddrPort("127.0.0.2:1053")}},
	}})
	client := dynamic.NewForConfigOrDie(ts.ClientConfig).Resource(dnses)
	ctx := context.Background()

	for _, tc := range []struct {
		name, manifest, msg, field string
	}{
		{"forward plugin", `
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata: {name: default}
spec:
  pluginConfig:
    forwardPlugins:
    - {domain: foo.com, nameServers: [192.0.2.1]}
    - {domain: bar.com, nameServers: [192.0.2.2, 127.0.0.1]}
`, `DNS.operator.dnsplane.io "default" is invalid: spec.pluginConfig.forwardPlugins[1].nameServers[1]: Invalid value: "127.0.0.1": must not be 127.0.0.1:53, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`,
			"spec.pluginConfig.forwardPlugins[1].nameServers[1]"},
		{"upstream resolver", `
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata: {name: default}
spec:
  upstreamResolvers:
    upstreams:
    - {type: Network, address: 127.0.0.2, port: 1053}
`, `DNS.operator.dnsplane.io "default" is invalid: spec.upstreamResolvers.upstreams[0]: Invalid value: "127.0.0.2:1053": must not be 127.0.0.2:1053, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`,
			"spec.upstreamResolvers.upstreams[0]"},
	} {
		_, err := client.Create(ctx, manifest(t, tc.manifest), metav1.CreateOptions{})
		var status *apierrors.StatusError
		if !errors.As(err, &status) {
			t.Fatalf("%s: create: %v, want 422 Invalid", tc.name, err)
		}
		st := status.Status()
		if st.Code != http.StatusUnprocessableEntity || st.Message != tc.msg {
			t.Errorf("%s: status %d %q,\nwant 422 %q", tc.name, st.Code, st.Message, tc.msg)
		}
		if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != tc.field {
			t.Errorf("%s: causes %+v", tc.name, st.Details)
		}
	}

	// Another port of an address it serves on is another server.
	if _, err := client.Create(ctx, manifest(t, `
apiVersion: operator.dnsplane.io/v1
kind: DNS
metadata: {name: default}
spec:
  pluginConfig:
    forwardPlugins:
    - {domain: foo.com, nameServers: ["127.0.0.1:5301"]}
`), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create with another port: %v", err)
	}
}
