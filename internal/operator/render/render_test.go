package render

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

var update = flag.Bool("update", false, "rewrite the golden Corefiles in testdata/")

func spec(t *testing.T, y string) *operatorv1.DNSSpec {
	t.Helper()
	s := &operatorv1.DNSSpec{}
	if err := yaml.UnmarshalStrict([]byte(y), s); err != nil {
		t.Fatalf("spec: %v", err)
	}
	return s
}

// TestCorefile renders the cases of the OpenShift DNS operator's
// Corefile unit tests, adapted to this API (one domain per forward
// plugin, typed upstreams, the rules enforced), against golden Corefiles
// in testdata/ (go test -run TestCorefile -update rewrites them). Where
// OpenShift renders an input this API refuses, the case checks that the
// renderer leaves it out and says why.
func TestCorefile(t *testing.T) {
	tests := []struct {
		name    string // golden file testdata/<name>.corefile
		spec    string
		opts    Options
		skipped []string
	}{
		// 1. Four servers with every policy and none (Random).
		{name: "01_forward_plugins", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [1.1.1.1, "2.2.2.2:5353"], policy: RoundRobin}
  - {domain: bar.com, nameServers: [3.3.3.3], policy: Random}
  - {domain: example.com, nameServers: [3.3.3.3], policy: Random}
  - {domain: fizz.com, nameServers: [5.5.5.5, 6.6.6.6], policy: Sequential}
  - {domain: buzz.com, nameServers: [4.4.4.4]}
  - {domain: example.buzz.com, nameServers: [4.4.4.4]}`},
		// 2. The empty spec: the "." block alone.
		{name: "02_default", spec: `{}`},
		// 3. Log levels reach every block.
		{name: "03_debug_loglevel", spec: `
logLevel: Debug
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [1.1.1.1, "2.2.2.2:5353"], policy: RoundRobin}`},
		{name: "03_trace_loglevel", spec: `
logLevel: Trace
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [1.1.1.1, "2.2.2.2:5353"], policy: RoundRobin}`},
		// 4. DNS over TLS to forwarders, without and with a CA bundle.
		{name: "04_forward_plugin_tls", spec: `
pluginConfig:
  forwardPlugins:
  - domain: foo.com
    nameServers: [1.1.1.1, "2.2.2.2:5353"]
    policy: RoundRobin
    transportConfig: {transport: TLS, tls: {serverName: dns.foo.com}}
  - domain: bar.com
    nameServers: [3.3.3.3]
    transportConfig: {transport: TLS, tls: {serverName: dns.bar.com, caBundle: {name: cacerts}}}`},
		// 5. Five Network upstreams, IPv6 bracketed, ports defaulted.
		{name: "05_five_upstreams", spec: `
upstreamResolvers:
  policy: RoundRobin
  upstreams:
  - {type: Network, address: 1.2.3.4}
  - {type: Network, address: 9.8.7.6}
  - {type: Network, address: "1001:aaaa:bbbb:cccc::2222", port: 53}
  - {type: Network, address: 2.3.4.5, port: 5353}
  - {type: Network, address: 127.0.0.53}`},
		// 6. Only a policy, or an empty upstream list: /etc/resolv.conf.
		{name: "06_just_policy", spec: `upstreamResolvers: {policy: RoundRobin}`},
		{name: "06_empty_upstreams", spec: `upstreamResolvers: {policy: RoundRobin, upstreams: []}`},
		// 7. One nameserver: Sequential by default, or the policy given.
		{name: "07_one_upstream_no_policy", spec: `upstreamResolvers: {upstreams: [{type: Network, address: 1.2.3.4}]}`},
		{name: "07_one_upstream_random", spec: `upstreamResolvers: {policy: Random, upstreams: [{type: Network, address: 1.2.3.4}]}`},
		// 8. Duplicate upstreams: OpenShift drops them; here they are
		// refused, and a stored list with them falls back to the default.
		{name: "08_duplicate_upstreams", spec: `
upstreamResolvers:
  policy: Random
  upstreams:
  - {type: SystemResolvConf}
  - {type: Network, address: "1001:aaaa:bbbb:cccc::2222", port: 5353}
  - {type: Network, address: "1001:aaaa:bbbb:cccc::2222", port: 5353}
  - {type: Network, address: 10.0.0.1, port: 53}
  - {type: Network, address: 10.0.0.1}
  - {type: SystemResolvConf}`,
			skipped: []string{`spec.upstreamResolvers left out: [spec.upstreamResolvers.upstreams[2]: Duplicate value: "[1001:aaaa:bbbb:cccc::2222]:5353", spec.upstreamResolvers.upstreams[4]: Duplicate value: "10.0.0.1:53", spec.upstreamResolvers.upstreams[5]: Duplicate value: "SystemResolvConf"]`}},
		// 9. An upstream without a type: OpenShift reads it as
		// SystemResolvConf; here the type is required.
		{name: "09_upstream_type_empty", spec: `
upstreamResolvers:
  upstreams:
  - {type: SystemResolvConf}
  - {type: Network, address: 100.1.1.1, port: 5500}
  - {port: 53}`,
			skipped: []string{`spec.upstreamResolvers left out: spec.upstreamResolvers.upstreams[2].type: Required value`}},
		// 10. SystemResolvConf with an address: OpenShift ignores it; here
		// it is refused.
		{name: "10_system_resolv_conf_address", spec: `
upstreamResolvers:
  policy: Random
  upstreams: [{type: SystemResolvConf, address: 1.2.3.4}]`,
			skipped: []string{`spec.upstreamResolvers left out: spec.upstreamResolvers.upstreams[0].address: Forbidden: may not be set when type is SystemResolvConf`}},
		// 11. Upstream resolvers over TLS with a CA bundle, and without
		// (system CAs: what OpenShift falls back to when the ConfigMap is
		// missing, Bug 2092509).
		{name: "11_upstream_resolvers_tls_ca", spec: `
upstreamResolvers:
  policy: RoundRobin
  transportConfig: {transport: TLS, tls: {serverName: example.com, caBundle: {name: ca-bundle-config}}}
  upstreams:
  - {type: Network, address: 9.8.7.6}
  - {type: Network, address: "1001:aaaa:bbbb:cccc::2222", port: 53}`},
		{name: "11_upstream_resolvers_tls", spec: `
upstreamResolvers:
  policy: RoundRobin
  transportConfig: {transport: TLS, tls: {serverName: example.com}}
  upstreams: [{type: Network, address: 9.8.7.6}]`},
		// 12. protocolStrategy TCP, on a forwarder and on the upstream
		// resolvers; empty keeps UDP first.
		{name: "12_forward_plugin_tcp", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [1.1.1.1, "2.2.2.2:5353"], policy: RoundRobin, protocolStrategy: TCP}
  - {domain: bar.com, nameServers: [3.3.3.3], protocolStrategy: ""}`},
		{name: "12_upstream_resolvers_tcp", spec: `upstreamResolvers: {protocolStrategy: TCP}`},
		// 13. What OpenShift fails the whole Corefile for: here the part
		// is left out and the rest rendered.
		{name: "13_tls_with_system_resolv_conf", spec: `
upstreamResolvers:
  transportConfig: {transport: TLS, tls: {serverName: example.com}}`,
			skipped: []string{`spec.upstreamResolvers left out: spec.upstreamResolvers.upstreams[0].type: Invalid value: "SystemResolvConf": must be Network when transport is TLS`}},
		{name: "13_invalid_forward_plugins", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [non-ip, "non-ip:5353"], transportConfig: {transport: TLS, tls: {serverName: dns.foo.com}}}
  - {domain: bar.com, nameServers: [3.3.3.3], transportConfig: {transport: TLS}}
  - {domain: baz.com, nameServers: [4.4.4.4]}
upstreamResolvers:
  upstreams: [{type: Network}]`,
			skipped: []string{
				`spec.pluginConfig.forwardPlugins[0] left out: [spec.pluginConfig.forwardPlugins[0].nameServers[0]: Invalid value: "non-ip": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT, spec.pluginConfig.forwardPlugins[0].nameServers[1]: Invalid value: "non-ip:5353": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT]`,
				`spec.pluginConfig.forwardPlugins[1] left out: spec.pluginConfig.forwardPlugins[1].transportConfig.tls: Required value: required when transport is TLS`,
				`spec.upstreamResolvers left out: spec.upstreamResolvers.upstreams[0].address: Required value: required when type is Network`,
			}},
		// 14. Cache TTLs in whole seconds; below a second is refused and
		// falls back to the defaults.
		{name: "14_cache", spec: `cache: {positiveTTL: 9999s, negativeTTL: 29s}`},
		{name: "14_cache_fractions", spec: `cache: {positiveTTL: 1h10m5.9s, negativeTTL: 1.9s}`},
		{name: "14_cache_below_a_second", spec: `cache: {positiveTTL: 999ms, negativeTTL: 444ms}`,
			skipped: []string{`spec.cache left out: [spec.cache.positiveTTL: Invalid value: "999ms": must be at least 1s, spec.cache.negativeTTL: Invalid value: "444ms": must be at least 1s]`}},
		// (15, OpenShift's ocp_dnsnameresolver plugin in every block, has
		// no counterpart: see TestClusterPluginsOnlyInRootBlock.)

		// Beyond OpenShift's cases: the seed's example, the rules
		// OpenShift never enforced, and the options.
		{name: "seed_example", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [1.2.3.4, "5.6.7.8:5353"], policy: RoundRobin}
  - {domain: bar.com, nameServers: [4.3.2.1, "8.7.6.5:5353"], policy: Sequential}`},
		{name: "stored_before_validation", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1]}
  - {domain: cluster.local, nameServers: [192.0.2.2]}
  - {domain: foo.com, nameServers: [192.0.2.3]}
  - {domain: ., nameServers: [192.0.2.4]}
  - {domain: ipv6.example, nameServers: ["2001:db8::1", "[2001:db8::2]:5353"], policy: Fastest}
logLevel: Loud`,
			skipped: []string{
				`spec.pluginConfig.forwardPlugins[1] left out: spec.pluginConfig.forwardPlugins[1].domain: Invalid value: "cluster.local": must not be the cluster domain "cluster.local": the cluster DNS answers those names itself`,
				`spec.pluginConfig.forwardPlugins[2] left out: spec.pluginConfig.forwardPlugins[2].domain: Duplicate value: "foo.com"`,
				`spec.pluginConfig.forwardPlugins[3] left out: spec.pluginConfig.forwardPlugins[3].domain: Invalid value: ".": must not be the root domain ".": spec.upstreamResolvers configure where its names are resolved`,
				`spec.pluginConfig.forwardPlugins[4] left out: spec.pluginConfig.forwardPlugins[4].policy: Unsupported value: "Fastest": supported values: "Random", "RoundRobin", "Sequential"`,
				`spec.logLevel left out: spec.logLevel: Unsupported value: "Loud": supported values: "Normal", "Debug", "Trace"`,
			}},
		{name: "options", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1], transportConfig: {transport: TLS, tls: {serverName: dns.foo.com, caBundle: {name: foo-ca}}}}`,
			opts: Options{ClusterDomain: "Corp.Example.", Listen: "127.0.0.1:1053", Kubeconfig: "/var/lib/dnsplane/kubeconfig",
				CABundleDir: "/run/ca", Health: "127.0.0.1:18080", Ready: "127.0.0.1:18181", Metrics: "127.0.0.1:19153",
				OptionCode: 65001, Trusted: []string{"127.0.0.1"}, NoLoop: true}},
		// A forwarder naming the cluster DNS's own address is a loop: left
		// out, as are upstream resolvers naming the node cache's (the
		// defaults then apply). Another port of the same address is not.
		{name: "own_addresses", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: self.test, nameServers: [192.0.2.1, 10.96.0.10]}
  - {domain: tls.test, nameServers: ["10.96.0.10:853"], transportConfig: {transport: TLS, tls: {serverName: dns.tls.test}}}
  - {domain: other-port.test, nameServers: ["10.96.0.10:5353"]}
upstreamResolvers:
  upstreams:
  - {type: Network, address: 192.0.2.53}
  - {type: Network, address: 127.0.0.1, port: 1053}`,
			opts: Options{OwnAddresses: []netip.AddrPort{netip.MustParseAddrPort("10.96.0.10:53"), netip.MustParseAddrPort("[::ffff:10.96.0.10]:853"), netip.MustParseAddrPort("127.0.0.1:1053")}},
			skipped: []string{
				`spec.pluginConfig.forwardPlugins[0] left out: spec.pluginConfig.forwardPlugins[0].nameServers[1]: Invalid value: "10.96.0.10": must not be 10.96.0.10:53, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`,
				`spec.pluginConfig.forwardPlugins[1] left out: spec.pluginConfig.forwardPlugins[1].nameServers[0]: Invalid value: "10.96.0.10:853": must not be 10.96.0.10:853, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`,
				`spec.upstreamResolvers left out: spec.upstreamResolvers.upstreams[1]: Invalid value: "127.0.0.1:1053": must not be 127.0.0.1:1053, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)`,
			}},
		// A forwarded reverse zone keeps the cluster's PTR names: the
		// kubernetes plugin for the zone first, falling through to forward.
		{name: "reverse_zone", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: in-addr.arpa, nameServers: [192.0.2.1]}`},
		{name: "offline", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1], transportConfig: {transport: TLS, tls: {serverName: dns.foo.com, caBundle: {name: foo-ca}}}}`,
			opts: Options{Offline: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped, err := Corefile(spec(t, tt.spec), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var gotSkipped []string
			for _, s := range skipped {
				gotSkipped = append(gotSkipped, s.String())
			}
			if g, w := strings.Join(gotSkipped, "\n"), strings.Join(tt.skipped, "\n"); g != w {
				t.Errorf("skipped:\n%s\nwant:\n%s", g, w)
			}
			golden := filepath.Join("testdata", tt.name+".corefile")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Corefile:\n%s\nwant (%s):\n%s", got, golden, want)
			}
		})
	}
}

// TestDeterministic: the same spec renders to the same bytes, whether
// rendered again, decoded again, or with defaults already applied: the
// operator compares renderings to decide whether to write.
func TestDeterministic(t *testing.T) {
	const y = `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [1.1.1.1, "2.2.2.2:5353", "2001:db8::1"], policy: RoundRobin}
  - {domain: a.foo.com, nameServers: [3.3.3.3], transportConfig: {transport: TLS, tls: {serverName: dns.foo.com, caBundle: {name: ca}}}}
  - {domain: bar.com, nameServers: [4.4.4.4], protocolStrategy: TCP}
upstreamResolvers:
  upstreams: [{type: SystemResolvConf}, {type: Network, address: 192.0.2.53, port: 5353}]
cache: {positiveTTL: 5m, negativeTTL: 10s}
logLevel: Debug`
	first, _, err := Corefile(spec(t, y), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		s := spec(t, y)
		if i%2 == 1 {
			// What a stored object holds once the strategy defaulted it.
			s.PluginConfig.ForwardPlugins[0].Policy = operatorv1.ForwardPolicyRoundRobin
			s.PluginConfig.ForwardPlugins[1].Policy = operatorv1.ForwardPolicyRandom
			s.PluginConfig.ForwardPlugins[2].Policy = operatorv1.ForwardPolicyRandom
			s.UpstreamResolvers.Policy = operatorv1.ForwardPolicySequential
			s.ManagementState = operatorv1.Managed
		}
		again, _, err := Corefile(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatalf("rendering %d differs:\n%s\nfirst:\n%s", i, again, first)
		}
	}
}

// TestCorefileLeavesSpecAlone: rendering reads the spec (an informer's
// cached object, later) without defaulting it in place.
func TestCorefileLeavesSpecAlone(t *testing.T) {
	s := spec(t, `pluginConfig: {forwardPlugins: [{domain: foo.com, nameServers: [192.0.2.1]}]}`)
	if _, _, err := Corefile(s, Options{}); err != nil {
		t.Fatal(err)
	}
	if s.PluginConfig.ForwardPlugins[0].Policy != "" || s.UpstreamResolvers.Upstreams != nil || s.LogLevel != "" {
		t.Errorf("spec changed: %+v", s)
	}
}

// TestClusterPluginsOnlyInRootBlock is the counterpart of OpenShift's
// DNSNameResolver case (its own plugin in every server block): dnsplane's
// own cluster plugins, searchexpand and kubernetes, and the health,
// readiness, reload and loop plugins are in the "." block only; every
// forwarder block has errors, log, loopguard, its own metrics, forward and
// cache.
func TestClusterPluginsOnlyInRootBlock(t *testing.T) {
	got, _, err := Corefile(spec(t, `pluginConfig: {forwardPlugins: [{domain: foo.com, nameServers: [192.0.2.1]}, {domain: bar.com, nameServers: [192.0.2.2]}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(got), "\n\n")
	if len(blocks) != 3 || !strings.HasPrefix(blocks[2], ".:5353 {") {
		t.Fatalf("blocks: %q", blocks)
	}
	for _, b := range blocks[:2] {
		var plugins []string
		for l := range strings.SplitSeq(b, "\n") {
			if strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "        ") && l != "    }" {
				plugins = append(plugins, strings.Fields(l)[0])
			}
		}
		if strings.Join(plugins, " ") != "errors log loopguard warmstack prometheus forward cache" {
			t.Errorf("forwarder block plugins %v:\n%s", plugins, b)
		}
	}
	for _, p := range []string{"searchexpand", "kubernetes", "health", "ready", "reload", "loop"} {
		line := regexp.MustCompile(`(?m)^    ` + p + `( |$)`)
		if len(line.FindAllString(string(got), -1)) != 1 || !line.MatchString(blocks[2]) {
			t.Errorf("%s is not in the . block alone", p)
		}
	}
}

// TestBadOptions: options that cannot be rendered are an error, unlike
// the spec's own problems.
func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Listen: "5353"}, {ClusterDomain: "a b"}, {Kubeconfig: "/my dir/kubeconfig"}, {CABundleDir: "/my dir"}} {
		s := spec(t, `pluginConfig: {forwardPlugins: [{domain: foo.com, nameServers: [192.0.2.1], transportConfig: {transport: TLS, tls: {serverName: dns.foo.com, caBundle: {name: ca}}}}]}`)
		if _, _, err := Corefile(s, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestNoCoreDNSOrClientGo: the renderer links neither CoreDNS (it runs
// where CoreDNS does not) nor client-go (it is a pure function of the
// spec).
func TestNoCoreDNSOrClientGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/coredns/", "github.com/miekg/dns", "k8s.io/client-go/"} {
			if strings.HasPrefix(p, banned) {
				t.Errorf("internal/operator/render depends on %s", p)
			}
		}
	}
}

func TestForwarders(t *testing.T) {
	spec := &operatorv1.DNSSpec{
		PluginConfig: operatorv1.PluginConfig{ForwardPlugins: []operatorv1.ForwardPlugin{
			{Domain: "foo.com", NameServers: []string{"192.0.2.1", "192.0.2.2:5353", "2001:db8::1"}},
			{Domain: "tls.com", NameServers: []string{"192.0.2.3"}, TransportConfig: &operatorv1.DNSTransportConfig{
				Transport: operatorv1.TLSTransport, TLS: &operatorv1.DNSOverTLSConfig{ServerName: "dns.tls.com"}}},
			{Domain: "cluster.local", NameServers: []string{"192.0.2.9"}}, // invalid: left out
		}},
	}
	got := Forwarders(spec, Options{})
	want := []Forwarder{
		{Domain: "foo.com", Addresses: []string{"192.0.2.1:53", "192.0.2.2:5353", "[2001:db8::1]:53"}},
		{Domain: "tls.com", Addresses: []string{"192.0.2.3:853"}},
		{Domain: ".", ResolvConf: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Forwarders = %+v, want %+v", got, want)
	}
	got = Forwarders(&operatorv1.DNSSpec{}, Options{SystemResolvers: []string{"127.0.0.1:5300", "10.0.0.1"}})
	want = []Forwarder{{Domain: ".", Addresses: []string{"127.0.0.1:5300", "10.0.0.1:53"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Forwarders with system resolvers = %+v, want %+v", got, want)
	}
}

func TestCorefileCABundles(t *testing.T) {
	s := spec(t, `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1], transportConfig: {transport: TLS, tls: {serverName: dns.foo.com, caBundle: {name: foo-ca}}}}
  - {domain: bar.com, nameServers: [192.0.2.2], transportConfig: {transport: TLS, tls: {serverName: dns.bar.com, caBundle: {name: bar-ca}}}}`)
	o := Options{CABundleDir: "/d", CABundles: map[string]string{"foo-ca": "PEM1"}}
	got, skipped, err := Corefile(s, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "# ca-bundle foo-ca sha256:") || strings.Contains(string(got), "bar") {
		t.Errorf("Corefile does not start with foo-ca's hash alone, or names bar:\n%s", got)
	}
	if !strings.Contains(string(got), "tls /d/ca-foo-ca.crt") {
		t.Errorf("no tls line for foo-ca:\n%s", got)
	}
	if len(skipped) != 1 || skipped[0].Path != "spec.pluginConfig.forwardPlugins[1]" ||
		!strings.Contains(skipped[0].String(), "caBundle.name: Not found") || !strings.Contains(skipped[0].String(), "no ConfigMap bar-ca") {
		t.Errorf("skipped = %v", skipped)
	}
	o.CABundles["foo-ca"] = "PEM2"
	changed, _, _ := Corefile(s, o)
	if string(changed) == string(got) {
		t.Error("a changed bundle must change the Corefile")
	}
	if strings.SplitN(string(changed), "\n", 2)[1] != strings.SplitN(string(got), "\n", 2)[1] {
		t.Error("a changed bundle changed more than the comment line")
	}
}

// TestSharedReverseZones: forward plugins over reverse names are noted,
// others and left-out ones are not.
func TestSharedReverseZones(t *testing.T) {
	s := spec(t, `pluginConfig: {forwardPlugins: [{domain: in-addr.arpa, nameServers: [192.0.2.1]}, {domain: foo.com, nameServers: [192.0.2.2]},
  {domain: arpa, nameServers: [192.0.2.3]}, {domain: 10.in-addr.arpa, nameServers: [bad]}]}`)
	got := SharedReverseZones(s, Options{})
	want := []string{
		"forward plugin in-addr.arpa: the cluster DNS answers the PTR names of Service and pod IPs in in-addr.arpa itself and forwards the other names",
		"forward plugin arpa: the cluster DNS answers the PTR names of Service and pod IPs in in-addr.arpa and ip6.arpa itself and forwards the other names",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SharedReverseZones = %q, want %q", got, want)
	}
}
