package nodecachenet

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestFlagsConfig(t *testing.T) {
	t.Parallel()
	a := netip.MustParseAddr
	tests := []struct {
		name      string
		args      []string
		listen    []string
		endpoints []string
		wantAddrs []netip.Addr
		wantPorts []uint16
		wantErr   string
	}{
		{
			name:      "addresses from --listen",
			args:      []string{"--setup-interface"},
			listen:    []string{"169.254.20.10:53", "10.96.0.10:53"},
			wantAddrs: []netip.Addr{a("169.254.20.10"), a("10.96.0.10")},
			wantPorts: []uint16{53},
		},
		{
			name:      "--local-ip, and the health port on one of them",
			args:      []string{"--setup-interface", "--local-ip", "169.254.20.10,fd00::10"},
			listen:    []string{"0.0.0.0:53"},
			endpoints: []string{"169.254.20.10:8080", "", "127.0.0.1:9253"},
			wantAddrs: []netip.Addr{a("169.254.20.10"), a("fd00::10")},
			wantPorts: []uint16{53, 8080},
		},
		{name: "bad --local-ip", args: []string{"--local-ip", "x"}, listen: []string{"169.254.20.10:53"}, wantErr: `--local-ip "x"`},
		{name: "loopback --local-ip", args: []string{"--local-ip", "127.0.0.1"}, listen: []string{"169.254.20.10:53"}, wantErr: "--local-ip: address 127.0.0.1"},
		{name: "unspecified --listen", listen: []string{"0.0.0.0:53"}, wantErr: "--setup-interface with --listen [0.0.0.0:53]: address 0.0.0.0"},
		{name: "long --interface-name", args: []string{"--interface-name", "nodelocaldns0123"}, listen: []string{"169.254.20.10:53"}, wantErr: "--interface-name: interface name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f Flags
			fs := pflag.NewFlagSet("nodecache", pflag.ContinueOnError)
			f.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			c, err := f.Config(tt.listen, tt.endpoints...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.InterfaceName != DefaultInterfaceName || !slices.Equal(c.Addresses, tt.wantAddrs) || !slices.Equal(c.Ports, tt.wantPorts) {
				t.Errorf("config %+v, want interface %s, addresses %v, ports %v", c, DefaultInterfaceName, tt.wantAddrs, tt.wantPorts)
			}
		})
	}
}
