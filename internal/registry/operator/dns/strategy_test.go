package dns

import (
	"context"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// object decodes a DNS named name with the given spec (YAML).
func object(t *testing.T, name, spec string) *operatorv1.DNS {
	t.Helper()
	obj := &operatorv1.DNS{}
	if err := yaml.UnmarshalStrict([]byte("spec:\n"+indent(spec)), obj); err != nil {
		t.Fatalf("spec %q: %v", spec, err)
	}
	obj.Name = name
	return obj
}

func indent(s string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// fp is a forward plugin spec with one forward plugin, for brevity.
func fp(body string) string {
	return "pluginConfig:\n  forwardPlugins:\n  - " + strings.ReplaceAll(strings.TrimSpace(body), "\n", "\n    ") + "\n"
}

func errorStrings(errs []error) string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return strings.Join(s, "\n")
}

// TestValidateCreate runs every rule, valid and invalid, through what a
// create runs: PrepareForCreate (defaults) then rest.ValidateCreate
// (metadata with the name rule, then the spec rules).
func TestValidateCreate(t *testing.T) {
	tests := []struct {
		name    string
		objName string // "" is "default"
		spec    string
		want    []string // field errors, in order
	}{
		// The seed's contract, verbatim.
		{name: "seed example", spec: `
pluginConfig:
  forwardPlugins:
  - domain: foo.com
    nameServers: [1.2.3.4, "5.6.7.8:5353"]
    policy: RoundRobin
  - domain: bar.com
    nameServers: [4.3.2.1, "8.7.6.5:5353"]
    policy: Sequential`},
		{name: "empty spec", spec: "{}"},

		// The singleton.
		{name: "name must be default", objName: "dns", spec: "{}",
			want: []string{`metadata.name: Invalid value: "dns": must be "default": the DNS resource is a singleton`}},

		// Domains.
		{name: "domain required", spec: fp("nameServers: [192.0.2.1]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].domain: Required value`}},
		{name: "domain not the root", spec: fp("domain: .\nnameServers: [192.0.2.1]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: ".": must not be the root domain ".": spec.upstreamResolvers configure where its names are resolved`}},
		{name: "domain RFC 1123 subdomain", spec: fp("domain: Foo_Bar.com\nnameServers: [192.0.2.1]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "Foo_Bar.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{name: "domain trailing dot", spec: fp("domain: foo.com.\nnameServers: [192.0.2.1]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "foo.com.": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{name: "domain single label", spec: fp("domain: corp\nnameServers: [192.0.2.1]")},
		{name: "cluster domain", spec: fp("domain: cluster.local\nnameServers: [192.0.2.1]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "cluster.local": must not be the cluster domain "cluster.local": the cluster DNS answers those names itself`}},
		{name: "subdomain of the cluster domain", spec: fp("domain: svc.cluster.local\nnameServers: [192.0.2.1]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "svc.cluster.local": must not be a subdomain of the cluster domain "cluster.local": the cluster DNS answers those names itself`}},
		{name: "parent of the cluster domain", spec: fp("domain: local\nnameServers: [192.0.2.1]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "local": must not be a parent domain of the cluster domain "cluster.local": the cluster DNS answers those names itself`}},
		{name: "sibling of the cluster domain", spec: fp("domain: corp.local\nnameServers: [192.0.2.1]")},
		{name: "suffix that is not a parent", spec: fp("domain: er.local\nnameServers: [192.0.2.1]")},
		{name: "autopath zone parent", spec: fp("domain: k8s.io\nnameServers: [192.0.2.1]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "k8s.io": must not be a parent domain of the autopath zone "ap.k8s.io": the cluster DNS expands autopath names itself`}},
		{name: "duplicate domain", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1]}
  - {domain: bar.com, nameServers: [192.0.2.2]}
  - {domain: foo.com, nameServers: [192.0.2.3]}`,
			want: []string{`spec.pluginConfig.forwardPlugins[2].domain: Duplicate value: "foo.com"`}},
		{name: "nested domains are not duplicates", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1]}
  - {domain: a.foo.com, nameServers: [192.0.2.2]}`},

		// Nameservers.
		{name: "every accepted form", spec: fp(`domain: foo.com
nameServers: [192.0.2.1, "192.0.2.2:5353", "2001:db8::1", "[2001:db8::2]:5353", "192.0.2.3:65535", "192.0.2.4:1"]`)},
		{name: "nameservers required", spec: fp("domain: foo.com\nnameServers: []"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].nameServers: Required value: at least 1 nameserver is required`}},
		{name: "15 nameservers", spec: fp("domain: foo.com\nnameServers: [10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4, 10.0.0.5, 10.0.0.6, 10.0.0.7, 10.0.0.8, 10.0.0.9, 10.0.0.10, 10.0.0.11, 10.0.0.12, 10.0.0.13, 10.0.0.14, 10.0.0.15]")},
		{name: "16 nameservers", spec: fp("domain: foo.com\nnameServers: [10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4, 10.0.0.5, 10.0.0.6, 10.0.0.7, 10.0.0.8, 10.0.0.9, 10.0.0.10, 10.0.0.11, 10.0.0.12, 10.0.0.13, 10.0.0.14, 10.0.0.15, 10.0.0.16]"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].nameServers: Too many: 16: must have at most 15 items`}},
		{name: "bad nameservers", spec: fp(`domain: foo.com
nameServers: [dns.example.com, "192.0.2.1:0", "192.0.2.1:65536", "192.0.2.1:dns", "2001:db8::1:53x", "[2001:db8::1]", "[192.0.2.1]:53", "2001:DB8::1", "010.0.0.1", "::ffff:192.0.2.1", "fe80::1%eth0", "192.0.2.1:"]`),
			want: []string{
				`spec.pluginConfig.forwardPlugins[0].nameServers[0]: Invalid value: "dns.example.com": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[1]: Invalid value: "192.0.2.1:0": port must be between 1 and 65535, inclusive`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[2]: Invalid value: "192.0.2.1:65536": port must be between 1 and 65535, inclusive`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[3]: Invalid value: "192.0.2.1:dns": port must be between 1 and 65535, inclusive`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[4]: Invalid value: "2001:db8::1:53x": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[5]: Invalid value: "[2001:db8::1]": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[6]: Invalid value: "[192.0.2.1]:53": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[7]: Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[8]: Invalid value: "010.0.0.1": must not have leading 0s`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[9]: Invalid value: "::ffff:192.0.2.1": must not be an IPv4-mapped IPv6 address`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[10]: Invalid value: "fe80::1%eth0": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT`,
				`spec.pluginConfig.forwardPlugins[0].nameServers[11]: Invalid value: "192.0.2.1:": port must be between 1 and 65535, inclusive`,
			}},
		{name: "duplicate nameserver, default port spelled out", spec: fp(`domain: foo.com
nameServers: [192.0.2.1, "192.0.2.2:5353", "192.0.2.1:53"]`),
			want: []string{`spec.pluginConfig.forwardPlugins[0].nameServers[2]: Duplicate value: "192.0.2.1:53"`}},
		{name: "same address, other port", spec: fp(`domain: foo.com
nameServers: [192.0.2.1, "192.0.2.1:5353"]`)},
		{name: "TLS default port is 853", spec: fp(`domain: foo.com
nameServers: [192.0.2.1, "192.0.2.1:53", "192.0.2.1:853"]
transportConfig: {transport: TLS, tls: {serverName: dns.foo.com}}`),
			want: []string{`spec.pluginConfig.forwardPlugins[0].nameServers[2]: Duplicate value: "192.0.2.1:853"`}},
		{name: "same nameserver in two forward plugins", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1]}
  - {domain: bar.com, nameServers: [192.0.2.1]}`},

		// Policies and other enums: exact values only.
		{name: "policies", spec: `
pluginConfig:
  forwardPlugins:
  - {domain: a.com, nameServers: [192.0.2.1], policy: Random}
  - {domain: b.com, nameServers: [192.0.2.1], policy: RoundRobin}
  - {domain: c.com, nameServers: [192.0.2.1], policy: Sequential}
upstreamResolvers: {policy: RoundRobin}`},
		{name: "policy case matters", spec: fp("domain: foo.com\nnameServers: [192.0.2.1]\npolicy: random"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].policy: Unsupported value: "random": supported values: "Random", "RoundRobin", "Sequential"`}},
		{name: "upstream policy", spec: "upstreamResolvers: {policy: round_robin}",
			want: []string{`spec.upstreamResolvers.policy: Unsupported value: "round_robin": supported values: "Random", "RoundRobin", "Sequential"`}},
		{name: "log levels", spec: "logLevel: Trace"},
		{name: "bad log level", spec: "logLevel: Verbose",
			want: []string{`spec.logLevel: Unsupported value: "Verbose": supported values: "Normal", "Debug", "Trace"`}},
		{name: "unmanaged", spec: "managementState: Unmanaged"},
		{name: "bad management state", spec: "managementState: Removed",
			want: []string{`spec.managementState: Unsupported value: "Removed": supported values: "Managed", "Unmanaged"`}},
		{name: "protocol strategy TCP", spec: fp("domain: foo.com\nnameServers: [192.0.2.1]\nprotocolStrategy: TCP") + "upstreamResolvers: {protocolStrategy: TCP}"},
		{name: "bad protocol strategy", spec: fp("domain: foo.com\nnameServers: [192.0.2.1]\nprotocolStrategy: ForceTCP"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].protocolStrategy: Unsupported value: "ForceTCP": supported values: "", "TCP"`}},

		// Transport.
		{name: "TLS with a CA bundle", spec: fp(`domain: foo.com
nameServers: ["192.0.2.1", "[2001:db8::1]:8853"]
transportConfig: {transport: TLS, tls: {serverName: dns.foo.com, caBundle: {name: foo-ca}}}`)},
		{name: "cleartext spelled out", spec: fp(`domain: foo.com
nameServers: [192.0.2.1]
transportConfig: {transport: Cleartext}`)},
		{name: "TLS without tls", spec: fp("domain: foo.com\nnameServers: [192.0.2.1]\ntransportConfig: {transport: TLS}"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].transportConfig.tls: Required value: required when transport is TLS`}},
		{name: "TLS without serverName", spec: fp("domain: foo.com\nnameServers: [192.0.2.1]\ntransportConfig: {transport: TLS, tls: {serverName: ''}}"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].transportConfig.tls.serverName: Required value: required when transport is TLS`}},
		{name: "TLS bad serverName and CA name", spec: fp("domain: foo.com\nnameServers: [192.0.2.1]\ntransportConfig: {transport: TLS, tls: {serverName: 'dns foo', caBundle: {name: ''}}}"),
			want: []string{
				`spec.pluginConfig.forwardPlugins[0].transportConfig.tls.serverName: Invalid value: "dns foo": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				`spec.pluginConfig.forwardPlugins[0].transportConfig.tls.caBundle.name: Required value`,
			}},
		{name: "tls with cleartext", spec: fp("domain: foo.com\nnameServers: [192.0.2.1]\ntransportConfig: {transport: Cleartext, tls: {serverName: dns.foo.com}}"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].transportConfig.tls: Forbidden: may only be set when transport is TLS`}},
		{name: "bad transport", spec: fp("domain: foo.com\nnameServers: [192.0.2.1]\ntransportConfig: {transport: DoH}"),
			want: []string{`spec.pluginConfig.forwardPlugins[0].transportConfig.transport: Unsupported value: "DoH": supported values: "Cleartext", "TLS"`}},

		// Upstream resolvers.
		{name: "network upstreams", spec: `
upstreamResolvers:
  upstreams:
  - {type: SystemResolvConf}
  - {type: Network, address: 192.0.2.53}
  - {type: Network, address: "2001:db8::53", port: 5353}`},
		{name: "network upstream needs an address", spec: "upstreamResolvers: {upstreams: [{type: Network, port: 53}]}",
			want: []string{`spec.upstreamResolvers.upstreams[0].address: Required value: required when type is Network`}},
		{name: "network upstream address and port", spec: "upstreamResolvers: {upstreams: [{type: Network, address: 192.0.2.300, port: 70000}]}",
			want: []string{
				`spec.upstreamResolvers.upstreams[0].address: Invalid value: "192.0.2.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
				`spec.upstreamResolvers.upstreams[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`,
			}},
		{name: "system resolv.conf takes no address or port", spec: "upstreamResolvers: {upstreams: [{type: SystemResolvConf, address: 192.0.2.1, port: 53}]}",
			want: []string{
				`spec.upstreamResolvers.upstreams[0].address: Forbidden: may not be set when type is SystemResolvConf`,
				`spec.upstreamResolvers.upstreams[0].port: Forbidden: may not be set when type is SystemResolvConf`,
			}},
		{name: "upstream type required and exact", spec: "upstreamResolvers: {upstreams: [{address: 192.0.2.1}, {type: network, address: 192.0.2.2}]}",
			want: []string{
				`spec.upstreamResolvers.upstreams[0].type: Required value`,
				`spec.upstreamResolvers.upstreams[1].type: Unsupported value: "network": supported values: "Network", "SystemResolvConf"`,
			}},
		{name: "duplicate upstreams", spec: `
upstreamResolvers:
  upstreams:
  - {type: SystemResolvConf}
  - {type: Network, address: 192.0.2.53}
  - {type: Network, address: 192.0.2.53, port: 53}
  - {type: SystemResolvConf}`,
			want: []string{
				`spec.upstreamResolvers.upstreams[2]: Duplicate value: "192.0.2.53:53"`,
				`spec.upstreamResolvers.upstreams[3]: Duplicate value: "SystemResolvConf"`,
			}},
		{name: "16 upstreams", spec: "upstreamResolvers: {upstreams: [" + strings.Repeat("{type: Network, address: 192.0.2.1}, ", 15) + "{type: Network, address: 192.0.2.2}]}",
			want: append([]string{`spec.upstreamResolvers.upstreams: Too many: 16: must have at most 15 items`}, dupes(1, 14)...)},
		{name: "TLS upstreams", spec: `
upstreamResolvers:
  upstreams: [{type: Network, address: 192.0.2.53}]
  transportConfig: {transport: TLS, tls: {serverName: dns.example.com}}`},
		{name: "TLS with the system resolv.conf", spec: `
upstreamResolvers:
  transportConfig: {transport: TLS, tls: {serverName: dns.example.com}}`,
			want: []string{`spec.upstreamResolvers.upstreams[0].type: Invalid value: "SystemResolvConf": must be Network when transport is TLS`}},

		// Cache.
		{name: "cache TTLs", spec: "cache: {positiveTTL: 1h10m5s, negativeTTL: 1s}"},
		{name: "cache TTLs below 1s", spec: "cache: {positiveTTL: 999ms, negativeTTL: 0s}",
			want: []string{
				`spec.cache.positiveTTL: Invalid value: "999ms": must be at least 1s`,
				`spec.cache.negativeTTL: Invalid value: "0s": must be at least 1s`,
			}},
	}
	s := New("")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.objName
			if name == "" {
				name = "default"
			}
			obj := object(t, name, tt.spec)
			s.PrepareForCreate(context.Background(), obj)
			var got []error
			for _, e := range rest.ValidateCreate(context.Background(), s, false, obj) {
				got = append(got, e)
			}
			if g, w := errorStrings(got), strings.Join(tt.want, "\n"); g != w {
				t.Errorf("errors:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

// dupes are the Duplicate errors of upstreams[from..to] all equal to
// upstreams[0] (192.0.2.1).
func dupes(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, `spec.upstreamResolvers.upstreams[`+strconv.Itoa(i)+`]: Duplicate value: "192.0.2.1:53"`)
	}
	return out
}

// TestClusterDomainFromConfig: the forbidden domain follows the cluster
// domain the strategy is given.
func TestClusterDomainFromConfig(t *testing.T) {
	s := New("Corp.Example.")
	for _, tt := range []struct{ domain, want string }{
		{"cluster.local", ""},
		{"corp.example", `spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "corp.example": must not be the cluster domain "corp.example": the cluster DNS answers those names itself`},
		{"example", `spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "example": must not be a parent domain of the cluster domain "corp.example": the cluster DNS answers those names itself`},
	} {
		obj := object(t, "default", fp("domain: "+tt.domain+"\nnameServers: [192.0.2.1]"))
		s.PrepareForCreate(context.Background(), obj)
		var got []error
		for _, e := range s.Validate(context.Background(), obj) {
			got = append(got, e)
		}
		if g := errorStrings(got); g != tt.want {
			t.Errorf("%s: %q, want %q", tt.domain, g, tt.want)
		}
	}
}

// TestPrepareForCreateDefaults: the defaults a stored DNS shows, and the
// status a client cannot set.
func TestPrepareForCreateDefaults(t *testing.T) {
	obj := object(t, "default", `
pluginConfig:
  forwardPlugins:
  - {domain: foo.com, nameServers: [192.0.2.1]}
  - {domain: bar.com, nameServers: [192.0.2.2], policy: Sequential}
upstreamResolvers:
  upstreams: [{type: Network, address: 192.0.2.53}]`)
	obj.Status.ClusterIP = "10.96.0.10"
	New("").PrepareForCreate(context.Background(), obj)
	got, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := `metadata:
  name: default
spec:
  logLevel: Normal
  managementState: Managed
  pluginConfig:
    forwardPlugins:
    - domain: foo.com
      nameServers:
      - 192.0.2.1
      policy: Random
    - domain: bar.com
      nameServers:
      - 192.0.2.2
      policy: Sequential
  upstreamResolvers:
    policy: Sequential
    upstreams:
    - address: 192.0.2.53
      type: Network
status: {}
`
	if string(got) != want {
		t.Errorf("prepared:\n%s\nwant:\n%s", got, want)
	}

	empty := object(t, "default", "{}")
	New("").PrepareForCreate(context.Background(), empty)
	if u := empty.Spec.UpstreamResolvers; len(u.Upstreams) != 1 || u.Upstreams[0].Type != operatorv1.SystemResolvConfType || u.Policy != operatorv1.ForwardPolicySequential {
		t.Errorf("default upstream resolvers: %+v", u)
	}
}

// TestValidateUpdateRatchets: an update re-checks only what it changes, so
// a DNS stored before these rules existed can still be updated elsewhere
// and have its status written; what it changes is checked in full.
func TestValidateUpdateRatchets(t *testing.T) {
	s := New("")
	ctx := context.Background()
	stored := object(t, "default", `
pluginConfig:
  forwardPlugins:
  - {domain: cluster.local, nameServers: [dns.example.com]}
  - {domain: foo.com, nameServers: [192.0.2.1]}
cache: {positiveTTL: 10ms}
logLevel: Loud`)
	stored.Generation = 1

	// A status write: the generic code stores the old object with the new
	// status.
	status := object(t, "default", "{}")
	*status = *stored
	status.Status.Conditions = []metav1.Condition{{Type: operatorv1.DNSDegraded, Status: metav1.ConditionTrue, Reason: "InvalidForwardPlugin"}}
	if errs := s.ValidateUpdate(ctx, status, stored); len(errs) != 0 {
		t.Errorf("status update: %v", errs)
	}

	// An update changing only a valid forward plugin (and defaulting the
	// others' policies) passes.
	upd := object(t, "default", `
pluginConfig:
  forwardPlugins:
  - {domain: cluster.local, nameServers: [dns.example.com]}
  - {domain: foo.com, nameServers: [192.0.2.2]}
cache: {positiveTTL: 10ms}
logLevel: Loud`)
	s.PrepareForUpdate(ctx, upd, stored)
	if errs := s.ValidateUpdate(ctx, upd, stored); len(errs) != 0 {
		t.Errorf("update of a valid part: %v", errs)
	}

	// Changing an invalid part checks it in full.
	bad := object(t, "default", `
pluginConfig:
  forwardPlugins:
  - {domain: cluster.local, nameServers: [dns.example.com, 192.0.2.9]}
  - {domain: foo.com, nameServers: [192.0.2.1]}
  - {domain: foo.com, nameServers: [192.0.2.3]}
cache: {positiveTTL: 20ms}
logLevel: Loud`)
	s.PrepareForUpdate(ctx, bad, stored)
	var got []error
	for _, e := range s.ValidateUpdate(ctx, bad, stored) {
		got = append(got, e)
	}
	want := strings.Join([]string{
		`spec.pluginConfig.forwardPlugins[0].domain: Invalid value: "cluster.local": must not be the cluster domain "cluster.local": the cluster DNS answers those names itself`,
		`spec.pluginConfig.forwardPlugins[0].nameServers[0]: Invalid value: "dns.example.com": must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT`,
		`spec.pluginConfig.forwardPlugins[2].domain: Duplicate value: "foo.com"`,
		`spec.cache.positiveTTL: Invalid value: "20ms": must be at least 1s`,
	}, "\n")
	if g := errorStrings(got); g != want {
		t.Errorf("errors:\n%s\nwant:\n%s", g, want)
	}
}
