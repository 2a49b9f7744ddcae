package agentdial

import (
	"net/netip"
	"strings"
	"testing"
)

func TestAllow(t *testing.T) {
	t.Parallel()
	services := netip.MustParsePrefix("10.96.0.0/12")
	defaults := Rules{Denied: []netip.Prefix{services}}
	lan := Rules{Networks: []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24")}, Ports: []uint16{10250, 10260}, Denied: []netip.Prefix{services}}
	loopback := Rules{Networks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Ports: []uint16{4000}}
	own := Endpoints(func(node string) (netip.AddrPort, bool) {
		if node == "node-1" {
			return netip.MustParseAddrPort("127.0.0.1:41000"), true
		}
		return netip.AddrPort{}, false
	})
	tests := []struct {
		name   string
		policy Policy
		node   string
		ap     string
		want   string // "" = allowed, else part of the error
	}{
		{"default: an agent on 10250", defaults, "n", "192.168.1.5:10250", ""},
		{"default: IPv6 agent", defaults, "n", "[2001:db8::5]:10250", ""},
		{"default: other port", defaults, "n", "192.168.1.5:2379", "port 2379 is not an agent port (10250)"},
		{"default: loopback", defaults, "n", "127.0.0.1:10250", "127.0.0.1 is a loopback, link-local, unspecified or multicast address"},
		{"default: IPv6 loopback", defaults, "n", "[::1]:10250", "::1 is a loopback"},
		{"default: v4-mapped loopback", defaults, "n", "[::ffff:127.0.0.1]:10250", "127.0.0.1 is a loopback"},
		{"default: link-local (cloud metadata)", defaults, "n", "169.254.169.254:10250", "is a loopback, link-local"},
		{"default: unspecified", defaults, "n", "0.0.0.0:10250", "is a loopback, link-local, unspecified"},
		{"default: service IP", defaults, "n", "10.96.0.1:10250", "10.96.0.1 is in 10.96.0.0/12, which holds no agents"},
		{"networks: inside", lan, "n", "192.168.1.9:10260", ""},
		{"networks: outside", lan, "n", "192.168.2.9:10250", "192.168.2.9 is not in the agents' networks (192.168.1.0/24)"},
		{"networks: loopback when listed", loopback, "n", "127.0.0.2:4000", ""},
		{"networks: port", loopback, "n", "127.0.0.2:4001", "port 4001 is not an agent port (4000)"},
		{"own agent", own, "node-1", "127.0.0.1:41000", ""},
		{"own agent's port for another node", own, "node-2", "127.0.0.1:41000", `it is not the exec server of node "node-2"'s agent`},
		{"own agent, other port", own, "node-1", "127.0.0.1:2379", `not the exec server of node "node-1"'s agent`},
		{"any: rules or own", Any{defaults, own}, "node-1", "127.0.0.1:41000", ""},
		{"any: the rules' reason first", Any{defaults, own}, "node-1", "127.0.0.1:2379", "127.0.0.1 is a loopback"},
		{"any: none", Any{}, "n", "192.168.1.5:10250", "no agent endpoints are allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.policy.Allow(tt.node, netip.MustParseAddrPort(tt.ap))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("err %v, want %q", err, tt.want)
			case err != nil && !strings.HasPrefix(err.Error(), "the API server does not dial "):
				t.Errorf("err %v does not say what was not dialed", err)
			}
		})
	}
}
