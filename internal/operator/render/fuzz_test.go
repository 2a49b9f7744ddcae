package render

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/dnsspec"
)

// FuzzCorefile: a forward plugin from any domain, nameservers and policy
// (what a stored DNS may hold, validated or not) renders without a panic;
// one the API server's rules accept is never left out, and its domain
// gets a server block; one they refuse is left out, never rendered.
func FuzzCorefile(f *testing.F) {
	for _, s := range [][4]string{
		{"foo.com", "10.0.0.1", "[2001:db8::1]:5353", "Random"},
		{"a.foo.com", "10.0.0.1:53", "10.0.0.1:53", "Sequential"},
		{"cluster.local", "1.2.3.4", "", "RoundRobin"},
		{".", "1.2.3.4:0", "x", "random"},
		{"foo.com\n}", "1.2.3.4", "", "Random"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, domain, ns1, ns2, policy string) {
		fp := operatorv1.ForwardPlugin{Domain: domain, NameServers: []string{ns1}, Policy: operatorv1.ForwardPolicy(policy)}
		if ns2 != "" {
			fp.NameServers = append(fp.NameServers, ns2)
		}
		spec := &operatorv1.DNSSpec{PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{fp}}}
		valid := len(dnsspec.ValidateSpec(spec, "cluster.local", field.NewPath("spec"))) == 0
		text, skipped, err := Corefile(spec, Options{Offline: true})
		if err != nil {
			if valid {
				t.Fatalf("valid spec %+v: %v", fp, err)
			}
			return
		}
		if valid && len(skipped) != 0 {
			t.Fatalf("valid forwarder %+v left out: %v", fp, skipped)
		}
		if !valid && len(skipped) == 0 {
			t.Fatalf("invalid forwarder %+v rendered:\n%s", fp, text)
		}
		if valid && !strings.Contains(string(text), strings.TrimSuffix(strings.ToLower(domain), ".")+":") {
			t.Fatalf("valid forwarder %+v has no server block:\n%s", fp, text)
		}
	})
}
