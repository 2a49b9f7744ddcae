package dnsresource

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/crd"
	dnsregistry "github.com/dnsplane/dnsplane/internal/registry/operator/dns"
)

// Where a stock kube-apiserver enforces a rule of dnsplane's server.
type stage string

const (
	// schemaStage: the CRD's OpenAPI schema (required, enum, bounds).
	schemaStage stage = "schema"
	// celStage: an x-kubernetes-validations rule (the write passes once
	// the rules are taken out of the CRD).
	celStage stage = "cel"
	// webhookStage: the CRD accepts the write, the webhook refuses it.
	webhookStage stage = "webhook"
)

// own is the cluster DNS address the rows' server and webhook both know
// (the operator's Service address of the default service range).
var own = []netip.AddrPort{netip.MustParseAddrPort("10.96.0.10:53")}

// object is a DNS "default" with spec (YAML, indented by two).
func object(spec string) string {
	return "apiVersion: operator.dnsplane.io/v1\nkind: DNS\nmetadata:\n  name: default\nspec:\n" + spec
}

func forward(domain string, nameServers ...string) string {
	ns, _ := json.Marshal(nameServers)
	return fmt.Sprintf("  pluginConfig:\n    forwardPlugins:\n    - domain: %q\n      nameServers: %s\n", domain, ns)
}

// forwardWith is one forward plugin with extra fields (a YAML flow map
// body, e.g. `policy: X`).
func forwardWith(extra string) string {
	return fmt.Sprintf("  pluginConfig:\n    forwardPlugins:\n    - {domain: corp.example, nameServers: [192.0.2.1], %s}\n", extra)
}

func upstreams(list string) string { return "  upstreamResolvers:\n    upstreams: " + list + "\n" }

func manyForwardPlugins(n int) string {
	var b strings.Builder
	b.WriteString("  pluginConfig:\n    forwardPlugins:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - {domain: d%d.example, nameServers: [192.0.2.1]}\n", i)
	}
	return b.String()
}

func networkUpstreams(n int) string {
	var list []string
	for _, a := range manyNameServers(n) {
		list = append(list, "{type: Network, address: "+a+"}")
	}
	return "[" + strings.Join(list, ", ") + "]"
}

func manyNameServers(n int) []string {
	var ns []string
	for i := range n {
		ns = append(ns, fmt.Sprintf("192.0.2.%d", i+1))
	}
	return ns
}

// ruleCases is one invalid DNS per rule of dnsplane's server
// (internal/operator/dnsspec through the DNS strategy), with where a
// stock kube-apiserver refuses it and whether it says so in the server's
// words. docs/dns-operator.md's table follows it.
var ruleCases = []struct {
	name string
	doc  string
	old  string // stored object: an update
	at   stage
	same bool // the stock answer has the server's message for each error
}{
	{name: "name not default", doc: strings.Replace(object("  logLevel: Debug\n"), "name: default", "name: other", 1), at: schemaStage},

	{name: "more than 150 forward plugins", doc: object(manyForwardPlugins(151)), at: schemaStage},
	{name: "domain missing", doc: object("  pluginConfig:\n    forwardPlugins:\n    - nameServers: [192.0.2.1]\n"), at: schemaStage, same: true},
	{name: "domain empty", doc: object(forward("", "192.0.2.1")), at: celStage},
	{name: "domain root", doc: object(forward(".", "192.0.2.1")), at: celStage, same: true},
	{name: "domain not a lower-case subdomain", doc: object(forward("Corp.Example", "192.0.2.1")), at: celStage, same: true},
	{name: "domain with an underscore", doc: object(forward("_tcp.example", "192.0.2.1")), at: celStage, same: true},
	{name: "domain longer than 253", doc: object(forward(strings.Repeat("a.", 127), "192.0.2.1")), at: schemaStage},
	{name: "domain the autopath zone", doc: object(forward("ap.k8s.io", "192.0.2.1")), at: celStage, same: true},
	{name: "domain under the autopath zone", doc: object(forward("x.ap.k8s.io", "192.0.2.1")), at: celStage, same: true},
	{name: "domain above the autopath zone", doc: object(forward("k8s.io", "192.0.2.1")), at: celStage, same: true},
	{name: "domain the cluster domain", doc: object(forward("cluster.local", "192.0.2.1")), at: webhookStage, same: true},
	{name: "domain under the cluster domain", doc: object(forward("svc.cluster.local", "192.0.2.1")), at: webhookStage, same: true},
	{name: "domain above the cluster domain", doc: object(forward("local", "192.0.2.1")), at: webhookStage, same: true},
	{name: "domain twice", doc: object("  pluginConfig:\n    forwardPlugins:\n    - {domain: a.example, nameServers: [192.0.2.1]}\n    - {domain: a.example, nameServers: [192.0.2.2]}\n"), at: webhookStage, same: true},

	{name: "nameServers missing", doc: object("  pluginConfig:\n    forwardPlugins:\n    - domain: corp.example\n"), at: schemaStage},
	{name: "nameServers empty", doc: object(forward("corp.example")), at: schemaStage},
	{name: "16 nameServers", doc: object(forward("corp.example", manyNameServers(16)...)), at: schemaStage},
	{name: "nameserver empty", doc: object(forward("corp.example", "")), at: celStage},
	{name: "nameserver a host name", doc: object(forward("corp.example", "dns.bar.com")), at: celStage, same: true},
	{name: "nameserver port 0", doc: object(forward("corp.example", "192.0.2.1:0")), at: celStage, same: true},
	{name: "nameserver port 65536", doc: object(forward("corp.example", "192.0.2.1:65536")), at: celStage, same: true},
	{name: "nameserver port not a number", doc: object(forward("corp.example", "192.0.2.1:dns")), at: celStage, same: true},
	{name: "nameserver IPv6 port without brackets", doc: object(forward("corp.example", "[2001:db8::1]")), at: celStage, same: true},
	{name: "nameserver IPv4 in brackets", doc: object(forward("corp.example", "[192.0.2.1]:53")), at: celStage, same: true},
	{name: "nameserver IPv6 not canonical", doc: object(forward("corp.example", "2001:DB8::1")), at: celStage},
	{name: "nameserver IPv6 not canonical with port", doc: object(forward("corp.example", "[2001:db8:0::1]:53")), at: celStage},
	{name: "nameserver IPv4 leading zero", doc: object(forward("corp.example", "192.0.2.01")), at: celStage},
	{name: "nameserver IPv4-mapped IPv6", doc: object(forward("corp.example", "::ffff:192.0.2.1")), at: celStage},
	{name: "nameserver longer than 47", doc: object(forward("corp.example", strings.Repeat("1", 48))), at: schemaStage},
	{name: "nameserver twice", doc: object(forward("corp.example", "192.0.2.1", "192.0.2.1:53")), at: webhookStage, same: true},
	{name: "nameserver twice over TLS", doc: object(forwardWith(`nameServers: ["192.0.2.1", "192.0.2.1:853"], transportConfig: {transport: TLS, tls: {serverName: dns.example}}`)), at: webhookStage, same: true},
	{name: "nameserver the cluster DNS", doc: object(forward("corp.example", "10.96.0.10")), at: webhookStage, same: true},
	{name: "policy unknown", doc: object(forwardWith("policy: Fastest")), at: schemaStage, same: true},
	{name: "protocolStrategy unknown", doc: object(forwardWith("protocolStrategy: UDP")), at: schemaStage},
	{name: "transport unknown", doc: object(forwardWith("transportConfig: {transport: QUIC}")), at: schemaStage},
	{name: "TLS without tls", doc: object(forwardWith("transportConfig: {transport: TLS}")), at: celStage, same: true},
	{name: "tls with Cleartext", doc: object(forwardWith("transportConfig: {transport: Cleartext, tls: {serverName: dns.example}}")), at: celStage, same: true},
	{name: "tls without transport", doc: object(forwardWith("transportConfig: {tls: {serverName: dns.example}}")), at: celStage, same: true},
	{name: "TLS serverName missing", doc: object(forwardWith("transportConfig: {transport: TLS, tls: {}}")), at: celStage, same: true},
	{name: "TLS serverName empty", doc: object(forwardWith(`transportConfig: {transport: TLS, tls: {serverName: ""}}`)), at: celStage, same: true},
	{name: "TLS serverName not a subdomain", doc: object(forwardWith("transportConfig: {transport: TLS, tls: {serverName: Bad_Name}}")), at: celStage, same: true},
	{name: "TLS caBundle name missing", doc: object(forwardWith("transportConfig: {transport: TLS, tls: {serverName: dns.example, caBundle: {}}}")), at: celStage},
	{name: "TLS caBundle name not a subdomain", doc: object(forwardWith("transportConfig: {transport: TLS, tls: {serverName: dns.example, caBundle: {name: Bad_Name}}}")), at: celStage, same: true},

	{name: "16 upstreams", doc: object(upstreams(networkUpstreams(16))), at: schemaStage},
	{name: "upstream type missing", doc: object(upstreams("[{address: 192.0.2.1}]")), at: schemaStage, same: true},
	{name: "upstream type unknown", doc: object(upstreams("[{type: Resolver}]")), at: schemaStage},
	{name: "SystemResolvConf with address", doc: object(upstreams("[{type: SystemResolvConf, address: 192.0.2.1}]")), at: celStage, same: true},
	{name: "SystemResolvConf with port", doc: object(upstreams("[{type: SystemResolvConf, port: 53}]")), at: celStage, same: true},
	{name: "Network without address", doc: object(upstreams("[{type: Network}]")), at: celStage, same: true},
	{name: "Network address a host name", doc: object(upstreams("[{type: Network, address: dns.example}]")), at: celStage, same: true},
	{name: "Network address not canonical", doc: object(upstreams("[{type: Network, address: '2001:DB8::1'}]")), at: celStage},
	{name: "Network address longer than 39", doc: object(upstreams("[{type: Network, address: '" + strings.Repeat("1", 40) + "'}]")), at: schemaStage},
	{name: "Network port 65536", doc: object(upstreams("[{type: Network, address: 192.0.2.1, port: 65536}]")), at: schemaStage},
	{name: "Network port negative", doc: object(upstreams("[{type: Network, address: 192.0.2.1, port: -1}]")), at: schemaStage},
	{name: "upstream twice", doc: object(upstreams("[{type: Network, address: 192.0.2.1}, {type: Network, address: 192.0.2.1, port: 53}]")), at: webhookStage, same: true},
	{name: "upstream the cluster DNS", doc: object(upstreams("[{type: Network, address: 10.96.0.10}]")), at: webhookStage, same: true},
	{name: "upstreams SystemResolvConf over TLS", doc: object("  upstreamResolvers:\n    upstreams: [{type: SystemResolvConf}]\n    transportConfig: {transport: TLS, tls: {serverName: dns.example}}\n"), at: webhookStage, same: true},
	{name: "upstreams default over TLS", doc: object("  upstreamResolvers:\n    transportConfig: {transport: TLS, tls: {serverName: dns.example}}\n"), at: webhookStage, same: true},
	{name: "upstreams policy unknown", doc: object("  upstreamResolvers:\n    policy: Fastest\n"), at: schemaStage, same: true},
	{name: "upstreams TLS without tls", doc: object("  upstreamResolvers:\n    upstreams: [{type: Network, address: 192.0.2.1}]\n    transportConfig: {transport: TLS}\n"), at: celStage, same: true},
	{name: "upstreams protocolStrategy unknown", doc: object("  upstreamResolvers:\n    protocolStrategy: UDP\n"), at: schemaStage},

	{name: "positiveTTL under 1s", doc: object("  cache: {positiveTTL: 500ms}\n"), at: celStage, same: true},
	{name: "negativeTTL 0s", doc: object("  cache: {negativeTTL: 0s}\n"), at: celStage, same: true},
	{name: "logLevel unknown", doc: object("  logLevel: Verbose\n"), at: schemaStage, same: true},
	{name: "managementState unknown", doc: object("  managementState: Disabled\n"), at: schemaStage, same: true},

	{name: "update adds a duplicate domain", old: object(forward("a.example", "192.0.2.1")),
		doc: object("  pluginConfig:\n    forwardPlugins:\n    - {domain: a.example, nameServers: [192.0.2.1]}\n    - {domain: a.example, nameServers: [192.0.2.2]}\n"), at: webhookStage, same: true},
	{name: "update to a bad nameserver", old: object(forward("a.example", "192.0.2.1")),
		doc: object(forward("a.example", "dns.bar.com")), at: celStage, same: true},
}

// serverErrors is dnsplane's own API server's answer to the write: the
// DNS strategy's defaults and validation, with the same cluster DNS
// addresses as the webhook.
func serverErrors(t *testing.T, doc, old string) field.ErrorList {
	t.Helper()
	ctx := context.Background()
	s := dnsregistry.New("")
	s.OwnAddresses = func() []netip.AddrPort { return own }
	obj := typed(t, doc)
	if old == "" {
		s.PrepareForCreate(ctx, obj)
		return s.Validate(ctx, obj)
	}
	o := typed(t, old)
	s.PrepareForCreate(ctx, o)
	s.PrepareForUpdate(ctx, obj, o)
	return s.ValidateUpdate(ctx, obj, o)
}

func typed(t *testing.T, doc string) *operatorv1.DNS {
	t.Helper()
	var d operatorv1.DNS
	if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// withoutCEL is the CRD with its x-kubernetes-validations taken out.
func withoutCEL(t *testing.T, out []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "x-kubernetes-validations")
			for _, x := range v {
				strip(x)
			}
		case []any:
			for _, x := range v {
				strip(x)
			}
		}
	}
	strip(m)
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStockServerRefusesWhatOursRefuses: for each rule of dnsplane's
// server, a stock kube-apiserver with the printed CRD and this webhook
// refuses the same write, naming every field the server names; the
// stage says whether the CRD (schema or CEL) or the webhook refuses it.
func TestStockServerRefusesWhatOursRefuses(t *testing.T) {
	t.Parallel()
	out, err := crd.DNS()
	if err != nil {
		t.Fatal(err)
	}
	webhook := Validator{OwnAddresses: own}
	stock := newStockServer(t, out, webhook)
	noCEL := newStockServer(t, withoutCEL(t, out), webhook)
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			ours := findings(serverErrors(t, tc.doc, tc.old))
			if len(ours) == 0 {
				t.Fatal("dnsplane's server accepts the write: not a rule")
			}
			answer := stock.write(t, tc.doc, tc.old)
			theirs := answer.refused(t)
			t.Logf("ours:  %v\nstock: %v", ours, theirs)
			for _, e := range ours {
				if !slices.ContainsFunc(theirs, func(f finding) bool { return f.path == e.path }) {
					t.Errorf("the stock server does not refuse %s (%s)", e.path, e.body)
				}
				if tc.same && !slices.Contains(theirs, e) {
					t.Errorf("the stock server's message for %s differs: want %q", e.path, e.body)
				}
			}
			var got stage
			switch {
			case len(answer.schemaErrs) > 0 && len(noCEL.write(t, tc.doc, tc.old).schemaErrs) > 0:
				got = schemaStage
			case len(answer.schemaErrs) > 0:
				got = celStage
			default:
				got = webhookStage
			}
			if got != tc.at {
				t.Errorf("refused by the %s, want the %s", got, tc.at)
			}
		})
	}
}

// validCases are DNS writes dnsplane's server accepts: the stock server
// must accept them too (CEL no stricter than the server).
var validCases = []struct{ name, doc, old string }{
	{name: "empty spec", doc: object("  {}\n")},
	{name: "docs example", doc: object(`  pluginConfig:
    forwardPlugins:
    - domain: corp.example
      nameServers: [10.0.0.53, "10.0.1.53:5353"]
      policy: Sequential
    - domain: dot.example
      nameServers: ["192.0.2.1", "[2001:db8::1]:853"]
      transportConfig:
        transport: TLS
        tls: {serverName: dns.dot.example, caBundle: {name: dot-ca}}
  upstreamResolvers:
    upstreams:
    - {type: SystemResolvConf}
    - {type: Network, address: 192.0.2.53}
  cache: {positiveTTL: 5m, negativeTTL: 30s}
  logLevel: Debug
`)},
	{name: "every nameserver shape", doc: object(forward("a.example", "192.0.2.1", "192.0.2.2:1", "192.0.2.3:65535", "2001:db8::1", "[2001:db8::2]:5353", "::1", "[::]:53"))},
	{name: "port spelled with a sign and zeros", doc: object(forward("a.example", "192.0.2.1:+053"))},
	{name: "single-label and long domains", doc: object("  pluginConfig:\n    forwardPlugins:\n    - {domain: corp, nameServers: [192.0.2.1]}\n    - {domain: " +
		strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + ".example, nameServers: [192.0.2.1]}\n")},
	{name: "domains near the autopath zone", doc: object("  pluginConfig:\n    forwardPlugins:\n    - {domain: io.example, nameServers: [192.0.2.1]}\n" +
		"    - {domain: xap.k8s.io.example, nameServers: [192.0.2.1]}\n    - {domain: ap.k8s.iox, nameServers: [192.0.2.1]}\n")},
	{name: "150 forward plugins of 15 nameservers", doc: object(strings.ReplaceAll(manyForwardPlugins(150), "[192.0.2.1]", mustMarshal(manyNameServers(15))))},
	{name: "Cleartext with no tls", doc: object(forwardWith("transportConfig: {transport: Cleartext}"))},
	{name: "Network upstreams over TLS", doc: object("  upstreamResolvers:\n    upstreams: [{type: Network, address: 192.0.2.1}, {type: Network, address: '2001:db8::1', port: 8853}]\n    transportConfig: {transport: TLS, tls: {serverName: dns.example}}\n")},
	{name: "cache of exactly 1s and fractions", doc: object("  cache: {positiveTTL: 1s, negativeTTL: 1.5s}\n")},
	{name: "another port of the cluster DNS", doc: object(forward("a.example", "10.96.0.10:5353"))},
	{name: "update keeps a forward plugin stored before the rules", old: object(forward("cluster.local", "192.0.2.1")),
		doc: object(forward("cluster.local", "192.0.2.1") + "  logLevel: Trace\n")},
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestStockServerAcceptsWhatOursAccepts: no rule of the CRD or the
// webhook is stricter than dnsplane's server on these writes.
func TestStockServerAcceptsWhatOursAccepts(t *testing.T) {
	t.Parallel()
	out, err := crd.DNS()
	if err != nil {
		t.Fatal(err)
	}
	stock := newStockServer(t, out, Validator{OwnAddresses: own})
	for _, tc := range validCases {
		t.Run(tc.name, func(t *testing.T) {
			if errs := serverErrors(t, tc.doc, tc.old); len(errs) > 0 {
				t.Fatalf("dnsplane's server refuses: %v", errs)
			}
			if theirs := stock.write(t, tc.doc, tc.old).refused(t); len(theirs) > 0 {
				t.Errorf("the stock server refuses: %v", theirs)
			}
		})
	}
}

// stricterCases are writes dnsplane's server accepts and a stock server
// refuses, each for a reason docs/dns-operator.md gives: an explicit
// empty enum value or port 0, which dnsplane's server reads as "unset"
// and defaults, fail the CRD's enum and minimum (kubebuilder markers
// shared with dnsplane's own OpenAPI), and a port zero-padded past 47
// characters fails the CEL cost bound. And the CRD's ratcheting of an
// update (KEP-4008) skips the rules of an unchanged value, but the
// forward plugins are an atomic list, whose items it cannot pair with
// the stored ones: an update that changes the list re-checks a forward
// plugin stored before the rules, which dnsplane's server, pairing
// equal entries, does not.
var stricterCases = []struct{ name, doc, old string }{
	{name: "policy empty", doc: object(forwardWith(`policy: ""`))},
	{name: "logLevel empty", doc: object(`  logLevel: ""` + "\n")},
	{name: "managementState empty", doc: object(`  managementState: ""` + "\n")},
	{name: "upstreams policy empty", doc: object("  upstreamResolvers:\n    policy: \"\"\n")},
	{name: "upstream port 0", doc: object(upstreams("[{type: Network, address: 192.0.2.1, port: 0}]"))},
	{name: "nameserver port zero-padded", doc: object(forward("a.example", "192.0.2.1:"+strings.Repeat("0", 40)+"53"))},
	{name: "update adds a forward plugin beside one stored before the rules", old: object(forward("Corp.Example", "192.0.2.1")),
		doc: object("  pluginConfig:\n    forwardPlugins:\n    - {domain: Corp.Example, nameServers: [192.0.2.1]}\n    - {domain: b.example, nameServers: [192.0.2.2]}\n")},
}

// TestStockServerStricter keeps the list of differences true.
func TestStockServerStricter(t *testing.T) {
	t.Parallel()
	out, err := crd.DNS()
	if err != nil {
		t.Fatal(err)
	}
	stock := newStockServer(t, out, Validator{OwnAddresses: own})
	for _, tc := range stricterCases {
		t.Run(tc.name, func(t *testing.T) {
			if errs := serverErrors(t, tc.doc, tc.old); len(errs) > 0 {
				t.Fatalf("dnsplane's server refuses: %v", errs)
			}
			theirs := stock.write(t, tc.doc, tc.old).refused(t)
			if len(theirs) == 0 {
				t.Errorf("the stock server accepts it now: take it off the list (and docs/dns-operator.md)")
			}
			t.Logf("stock: %v", theirs)
		})
	}
}

// nameServerCorpus is every combination of address-like hosts and
// port-like suffixes, the shapes dnsspec.ParseNameServer tells apart.
func nameServerCorpus() []string {
	hosts := []string{"192.0.2.1", "0.0.0.0", "255.255.255.255", "192.0.2.01", "192.0.2", "192.0.2.256", "1.2.3.4.5",
		"2001:db8::1", "2001:DB8::1", "2001:db8:0::1", "::", "::1", "::ffff:192.0.2.1", "fe80::1%eth0", "2001:db8::g",
		"[2001:db8::1]", "[192.0.2.1]", "dns.example", "", "[", "]", ":"}
	suffixes := []string{"", ":53", ":0", ":1", ":65535", ":65536", ":+53", ":-53", ":053", ":", ":5a", "::53", "]:53", ":53]"}
	var out []string
	for _, h := range hosts {
		for _, s := range suffixes {
			out = append(out, h+s)
			if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
				out = append(out, "["+h+"]"+s)
			}
		}
	}
	return out
}

// TestNameServerRuleMatchesServer: the CRD's nameserver rules accept
// exactly the entries dnsplane's server accepts (up to the CRD's length
// bound), so the CEL copy of dnsspec.ParseNameServer is neither stricter
// nor looser. The webhook, which would catch a looser rule, is not asked.
func TestNameServerRuleMatchesServer(t *testing.T) {
	t.Parallel()
	out, err := crd.DNS()
	if err != nil {
		t.Fatal(err)
	}
	stock := newStockServer(t, out, Validator{})
	for _, ns := range nameServerCorpus() {
		checkNameServer(t, stock, ns)
	}
}

func checkNameServer(t *testing.T, stock *stockServer, ns string) {
	t.Helper()
	doc := object(forward("corp.example", ns))
	ours := serverErrors(t, doc, "")
	theirs := stock.write(t, doc, "").schemaErrs
	if (len(ours) == 0) != (len(theirs) == 0) {
		t.Errorf("nameserver %q: dnsplane's server %v, the CRD %v", ns, ours, theirs)
	}
}

// FuzzNameServerRule is TestNameServerRuleMatchesServer on any entry of
// up to the CRD's bound that names no own address (the own-address rule
// is the webhook's).
func FuzzNameServerRule(f *testing.F) {
	for _, ns := range nameServerCorpus() {
		f.Add(ns)
	}
	out, err := crd.DNS()
	if err != nil {
		f.Fatal(err)
	}
	stock := newStockServer(f, out, Validator{})
	f.Fuzz(func(t *testing.T, ns string) {
		// Entries YAML can carry as written (the test writes YAML).
		if len(ns) > 47 || !utf8.ValidString(ns) || strings.ContainsAny(ns, "\"\\") ||
			strings.IndexFunc(ns, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			t.Skip()
		}
		checkNameServer(t, stock, ns)
	})
}

// FuzzDomainRule: the CRD accepts a forward plugin's domain exactly when
// dnsplane's server does, but for the cluster domain rules (the
// webhook's: the cluster domain is the cluster's configuration).
func FuzzDomainRule(f *testing.F) {
	for _, d := range []string{"corp", "corp.example", "Corp.example", "-a.example", "a-.example", "a..b", ".", "", "a.", ".a",
		"ap.k8s.io", "x.ap.k8s.io", "k8s.io", "io", "xap.k8s.io", "cluster.local", "local", "a_b.example", strings.Repeat("a", 64) + ".example"} {
		f.Add(d)
	}
	out, err := crd.DNS()
	if err != nil {
		f.Fatal(err)
	}
	stock := newStockServer(f, out, Validator{})
	f.Fuzz(func(t *testing.T, d string) {
		if len(d) > 253 || !utf8.ValidString(d) || strings.ContainsAny(d, "\"\\") ||
			strings.IndexFunc(d, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			t.Skip()
		}
		doc := object(forward(d, "192.0.2.1"))
		var ours field.ErrorList
		for _, e := range serverErrors(t, doc, "") {
			if !strings.Contains(e.Detail, "the cluster domain") {
				ours = append(ours, e)
			}
		}
		theirs := stock.write(t, doc, "").schemaErrs
		if (len(ours) == 0) != (len(theirs) == 0) {
			t.Errorf("domain %q: dnsplane's server %v, the CRD %v", d, ours, theirs)
		}
	})
}
