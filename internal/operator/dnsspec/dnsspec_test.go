package dnsspec

import (
	"net/netip"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
)

func TestParseNameServer(t *testing.T) {
	p := field.NewPath("ns")
	for _, tt := range []struct {
		in   string
		addr string
		port uint16
		err  string
	}{
		{in: "192.0.2.1", addr: "192.0.2.1"},
		{in: "192.0.2.1:5353", addr: "192.0.2.1", port: 5353},
		{in: "2001:db8::1", addr: "2001:db8::1"},
		{in: "[2001:db8::1]:53", addr: "2001:db8::1", port: 53},
		// An IPv6 address ending in what looks like a port is an address.
		{in: "2001:db8::1:53", addr: "2001:db8::1:53"},
		{in: "[2001:db8::1]", err: "must be an IP address with an optional port"},
		{in: "[192.0.2.1]:53", err: "must be an IP address with an optional port"},
		{in: "192.0.2.1:0", err: "port must be between 1 and 65535, inclusive"},
		{in: "", err: "Required value"},
	} {
		addr, port, err := ParseNameServer(p, tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || addr != netip.MustParseAddr(tt.addr) || port != tt.port {
			t.Errorf("%q: %v %d %v, want %s %d", tt.in, addr, port, err, tt.addr, tt.port)
		}
	}
}

// TestDefaultedDoesNotAlias: the renderer defaults the spec it reads
// without writing to the object (an informer's cache, later).
func TestDefaultedDoesNotAlias(t *testing.T) {
	spec := operatorv1.DNSSpec{
		PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{{Domain: "foo.com", NameServers: []string{"192.0.2.1"}}}},
	}
	d := Defaulted(spec)
	if spec.PluginConfig.ForwardPlugins[0].Policy != "" || spec.UpstreamResolvers.Upstreams != nil || spec.LogLevel != "" {
		t.Errorf("input changed: %+v", spec)
	}
	if d.PluginConfig.ForwardPlugins[0].Policy != DefaultForwardPolicy || d.UpstreamResolvers.Policy != DefaultUpstreamPolicy ||
		len(d.UpstreamResolvers.Upstreams) != 1 || d.LogLevel != DefaultLogLevel || d.ManagementState != DefaultManagementState {
		t.Errorf("defaulted: %+v", d)
	}
}

func TestAutopathZone(t *testing.T) {
	if AutopathZone+"." != searchpath.Zone {
		t.Errorf("AutopathZone %q, searchpath.Zone %q", AutopathZone, searchpath.Zone)
	}
}

func TestClusterDomain(t *testing.T) {
	for in, want := range map[string]string{"": "cluster.local", "Corp.Example.": "corp.example", "cluster.local": "cluster.local"} {
		if got := ClusterDomain(in); got != want {
			t.Errorf("ClusterDomain(%q) = %q, want %q", in, got, want)
		}
	}
}
