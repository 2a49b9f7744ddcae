package nodecachenet

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	a := netip.MustParseAddr
	tests := []struct {
		name    string
		in      Config
		wantErr string
		check   func(t *testing.T, c Config)
	}{
		{
			name: "defaults",
			in:   Config{Addresses: []netip.Addr{DefaultAddress}},
			check: func(t *testing.T, c Config) {
				t.Helper()
				if c.InterfaceName != "nodelocaldns" || c.Table != "dnsplane-nodecache" || c.LockDir != "/run/dnsplane-nodecache" || c.kind != "dummy" {
					t.Errorf("defaults: %+v", c)
				}
				if !slices.Equal(c.Ports, []uint16{53}) {
					t.Errorf("ports %v, want [53]", c.Ports)
				}
			},
		},
		{
			name: "addresses deduplicated and unmapped, ports deduplicated",
			in:   Config{Addresses: []netip.Addr{a("169.254.20.10"), a("::ffff:169.254.20.10"), a("fd00::10")}, Ports: []uint16{53, 8080, 53}},
			check: func(t *testing.T, c Config) {
				t.Helper()
				if want := []netip.Addr{a("169.254.20.10"), a("fd00::10")}; !slices.Equal(c.Addresses, want) {
					t.Errorf("addresses %v, want %v", c.Addresses, want)
				}
				if !slices.Equal(c.Ports, []uint16{53, 8080}) {
					t.Errorf("ports %v", c.Ports)
				}
			},
		},
		{name: "no address", in: Config{}, wantErr: "no address"},
		{name: "invalid address", in: Config{Addresses: []netip.Addr{{}}}, wantErr: "invalid address"},
		{name: "unspecified", in: Config{Addresses: []netip.Addr{a("0.0.0.0")}}, wantErr: "want a unicast address"},
		{name: "loopback", in: Config{Addresses: []netip.Addr{a("127.0.0.1")}}, wantErr: "want a unicast address"},
		{name: "zone", in: Config{Addresses: []netip.Addr{a("fe80::1%eth0")}}, wantErr: "zone"},
		{name: "port 0", in: Config{Addresses: []netip.Addr{DefaultAddress}, Ports: []uint16{0}}, wantErr: "port 0"},
		{name: "long interface name", in: Config{InterfaceName: "nodelocaldns0123", Addresses: []netip.Addr{DefaultAddress}}, wantErr: "at most 15"},
		{name: "slash in interface name", in: Config{InterfaceName: "a/b", Addresses: []netip.Addr{DefaultAddress}}, wantErr: "at most 15"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := tt.in.withDefaults()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
