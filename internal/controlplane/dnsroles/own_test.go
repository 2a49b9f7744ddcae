package dnsroles

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/dnsplane/dnsplane/internal/controlplane"
)

// TestDNSAddresses: the API server and the operator's renderer are told
// every address up's DNS servers may serve on, so that a DNS resource
// forwarder naming one is refused (a forwarding loop).
func TestDNSAddresses(t *testing.T) {
	t.Parallel()
	r := New(Config{Listen: "127.0.0.1:10053", ListenFallback: "127.0.0.1:10054", NodeCacheListen: "127.0.0.1:1153",
		NodeCacheFallback: "[::ffff:127.0.0.1]:1053", Upstreams: []string{"192.0.2.53"}})
	var _ controlplane.DNSAddresser = r
	want := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:10053"), netip.MustParseAddrPort("127.0.0.1:10054"),
		netip.MustParseAddrPort("127.0.0.1:1153"), netip.MustParseAddrPort("127.0.0.1:1053")}
	if got := r.DNSAddresses(); !slices.Equal(got, want) {
		t.Errorf("DNSAddresses() = %v, want %v", got, want)
	}
	ro, err := r.RenderOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range ro.OwnAddresses {
		if !slices.Contains(want, a) {
			t.Errorf("RenderOptions().OwnAddresses has %v, not an address of the DNS servers", a)
		}
	}
	if !slices.Contains(ro.OwnAddresses, netip.MustParseAddrPort("127.0.0.1:1153")) {
		t.Errorf("RenderOptions().OwnAddresses = %v, want the node cache's address in it", ro.OwnAddresses)
	}
}
