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
	// The cluster DNS's address is a default, so every address of the
	// range ChooseAddresses may move it through counts; the node cache's
	// was given, so only it does.
	r := New(Config{Listen: "127.0.10.10:53", ListenDefault: true, NodeCacheListen: "[::ffff:127.0.0.1]:1153",
		Upstreams: []string{"192.0.2.53"}})
	var _ controlplane.DNSAddresser = r
	var want []netip.AddrPort
	for i := range MoveRange {
		want = append(want, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 10, byte(10 + i)}), 53))
	}
	want = append(want, netip.MustParseAddrPort("127.0.0.1:1153"))
	if got := r.DNSAddresses(); !slices.Equal(got, want) {
		t.Errorf("DNSAddresses() = %v, want %v", got, want)
	}
	ro, err := r.RenderOptions()
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
