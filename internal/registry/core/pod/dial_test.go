package pod

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/dnsplane/dnsplane/internal/agentdial"
)

// TestDialerChecksTheConnectedAddress: a Node's Hostname address is
// resolved when dialed, so the policy is applied to the address connected
// to, not only to the name (issue 22 item 4); a refused one is never
// connected to, so its error says nothing of the port.
func TestDialerChecksTheConnectedAddress(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	for _, host := range []string{"localhost", "127.0.0.1"} {
		c, err := dialer(agentdial.Rules{}, "node-1").DialContext(t.Context(), "tcp4", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			c.Close()
			t.Fatalf("%s: dialed the API server's loopback", host)
		}
		if !strings.Contains(err.Error(), `the API server does not dial 127.0.0.1:`) || !strings.Contains(err.Error(), "is a loopback") {
			t.Errorf("%s: %v", host, err)
		}
	}
	// What the rules allow is dialed.
	allow := agentdial.Rules{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Ports: []uint16{uint16(port)}} //nolint:gosec // a TCP port
	c, err := dialer(allow, "node-1").DialContext(t.Context(), "tcp4", l.Addr().String())
	if err != nil {
		t.Fatalf("an allowed endpoint: %v", err)
	}
	c.Close()
}
