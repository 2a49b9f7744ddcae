package crd

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
	"github.com/dnsplane/dnsplane/internal/operator/dnsspec"
)

// A stock kube-apiserver enforces the rules of dnsplane's DNS strategy
// (internal/operator/dnsspec, run by internal/registry/operator/dns) in
// two places: the CRD's schema and CEL rules below, for every rule a rule
// on one node of the schema can state at the server's field path, and
// the validating webhook (internal/webhook/dnsresource) for the rest.
// docs/dns-operator.md ("On a stock cluster") lists which is which and
// why; TestStockServerRefusesWhatOursRefuses checks each rule against the
// server's own validation.
//
// The CEL environment used is that of kube-apiserver 1.30 (the IP library
// arrived in 1.30; the format library, 1.31, is not used), so that the
// CRD is accepted by every server issue 30 targets (TestRulesCompileOn130).

// rule is one x-kubernetes-validations entry.
type rule struct {
	Rule    string `json:"rule"`
	Message string `json:"message,omitempty"`
	// MessageExpression, when set, is the message (Message is then the
	// fallback when it fails).
	MessageExpression string `json:"messageExpression,omitempty"`
	FieldPath         string `json:"fieldPath,omitempty"`
	Reason            string `json:"reason,omitempty"`
}

// The reasons a CEL rule may give (apiextensions' FieldValueErrorReason):
// the error types of the server's field errors.
const (
	required  = "FieldValueRequired"
	forbidden = "FieldValueForbidden"
)

// Lengths the CEL rules need bounded for the API server's cost estimate:
// every value longer is invalid on dnsplane's server too (a DNS subdomain
// is at most 253 characters, an address in canonical form at most 39, a
// nameserver "[IPv6]:PORT" at most 47), but for a nameserver whose port
// is zero-padded past that, which Go's strconv.Atoi reads
// (docs/dns-operator.md, "On a stock cluster").
const (
	maxSubdomainLength  = validation.DNS1123SubdomainMaxLength
	maxAddressLength    = len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
	maxNameServerLength = len("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535")
)

// dns1123Subdomain is apimachinery's DNS-1123 subdomain regular
// expression, anchored for CEL's matches() (which finds, not matches).
const dns1123Subdomain = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`

// subdomainMessage is the server's message for a value that is not a
// lower-case RFC 1123 subdomain, taken from apimachinery so that it stays
// the same.
func subdomainMessage() string {
	return validation.IsDNS1123Subdomain("-")[0]
}

// The messages of the server's rules that the CEL rules repeat word for
// word (dnsspec's; TestStockServerRefusesWhatOursRefuses fails when one
// drifts).
const (
	rootDomainMessage  = `must not be the root domain ".": spec.upstreamResolvers configure where its names are resolved`
	nameServerMessage  = "must be an IP address with an optional port: IPv4, IPv4:PORT, IPv6 or [IPv6]:PORT"
	portMessage        = "port must be between 1 and 65535, inclusive"
	tlsOnlyMessage     = "may only be set when transport is TLS"
	tlsRequiredMessage = "required when transport is TLS"
	notSystemMessage   = "may not be set when type is SystemResolvConf"
	networkMessage     = "required when type is Network"
	cacheTTLMessage    = "must be at least 1s"
)

// autopathRules are the server's three rules keeping a forwarded domain
// clear of the autopath zone, a fixed name (the cluster domain, the other
// zone the server keeps clear, is the cluster's configuration, which a
// CRD cannot know: the webhook checks it).
func autopathRules() []rule {
	zone := dnsspec.AutopathZone
	why := "the cluster DNS expands autopath names itself"
	return []rule{
		{Rule: fmt.Sprintf("self != '%s'", zone),
			Message: fmt.Sprintf("must not be the autopath zone %q: %s", zone, why)},
		{Rule: fmt.Sprintf("!self.endsWith('.%s')", zone),
			Message: fmt.Sprintf("must not be a subdomain of the autopath zone %q: %s", zone, why)},
		{Rule: fmt.Sprintf("self == '' || !'%s'.endsWith('.' + self)", zone),
			Message: fmt.Sprintf("must not be a parent domain of the autopath zone %q: %s", zone, why)},
	}
}

// subdomainRule checks a non-empty value is a lower-case RFC 1123
// subdomain (an empty one is the Required rule's), with the server's
// message. skip lists values that have a rule of their own.
func subdomainRule(skip ...string) rule {
	guard := "self == ''"
	for _, s := range skip {
		guard += fmt.Sprintf(" || self == '%s'", s)
	}
	return rule{Rule: guard + " || self.matches('" + dns1123Subdomain + "')", Message: subdomainMessage()}
}

// nonEmpty is the server's Required error for an empty string: self, or
// the child fieldPath of self, which is then also required to be
// present.
func nonEmpty(fieldPath, msg string) rule {
	if msg == "" {
		msg = "must not be empty"
	}
	r := rule{Rule: "self != ''", Message: msg, Reason: required}
	if fieldPath != "" {
		r.Rule = fmt.Sprintf("has(self.%[1]s) && self.%[1]s != ''", strings.TrimPrefix(fieldPath, "."))
		r.FieldPath = fieldPath
	}
	return r
}

// CEL expressions over a nameserver entry (self), in the shapes
// dnsspec.ParseNameServer accepts: an address alone, "IPv4:PORT" and
// "[IPv6]:PORT".
const (
	bracketed   = `self.matches('^\\[[^\\]]*\\]:[^:\\]]*$')`
	bracketHost = `self.substring(1, self.lastIndexOf(']'))`
	v4Port      = `self.matches('^[^:\\[\\]]*:[^:\\[\\]]*$')`
	v4Host      = `self.substring(0, self.lastIndexOf(':'))`
	portText    = `self.substring(self.lastIndexOf(':') + 1)`
)

// nameServerRules are the server's rules for one nameserver entry. The
// port is Go's strconv.Atoi's syntax, as the server parses it (a sign and
// leading zeros pass), bounded so CEL's int() cannot overflow.
func nameServerRules() []rule {
	strict := func(ip string) string { return fmt.Sprintf("(isIP(%[1]s) && ip.isCanonical(%[1]s))", ip) }
	form := "self == '' || " + strict("self") +
		" || (" + bracketed + " && " + strict(bracketHost) + " && ip(" + bracketHost + ").family() == 6)" +
		" || (" + v4Port + " && " + strict(v4Host) + " && ip(" + v4Host + ").family() == 4)"
	port := "!(" + bracketed + " || " + v4Port + ") || (" + portText + ".matches('^[-+]?[0-9]{1,18}$') && " +
		"int(" + portText + ") >= 1 && int(" + portText + ") <= 65535)"
	// The server's message is apimachinery's IsValidIP detail for an
	// address that is one but not in canonical form; so is this one, but
	// for the canonical form it quotes (canonicalMessage).
	msg := "isIP(self) ? " + canonicalMessage +
		" : (" + bracketed + " && isIP(" + bracketHost + ") && ip(" + bracketHost + ").family() == 6) ? " + canonicalMessage +
		" : '" + nameServerMessage + "'"
	return []rule{
		nonEmpty("", ""),
		{Rule: form, Message: nameServerMessage, MessageExpression: msg},
		{Rule: port, Message: portMessage},
	}
}

// canonicalMessage is a CEL string literal of apimachinery's IsValidIP
// detail of an IP address that is not in canonical form, without the
// form itself, which the server quotes: the cost estimate cannot bound
// the length of string(ip(…)), and a message built from it makes the
// CRD's estimated cost exceed the limit 100 times over.
const canonicalMessage = `'must be in canonical form (RFC 5952: lower case, the longest run of zeros as ::)'`

// addressRule is the server's rule for a Network upstream's address, an
// IP address in strict form, with apimachinery's IsValidIP messages for
// what is no address and for an address not in canonical form (for a
// leading zero or an IPv4-mapped IPv6 address, IsValidIP says more
// precisely why).
func addressRule() rule {
	notIP := validation.IsValidIP(field.NewPath("address"), "-")[0].Detail
	return rule{
		Rule:              "self == '' || (isIP(self) && ip.isCanonical(self))",
		Message:           notIP,
		MessageExpression: "isIP(self) ? " + canonicalMessage + " : '" + notIP + "'",
	}
}

// transportRules are the cross-field rules of a transportConfig.
func transportRules() []rule {
	isTLS := fmt.Sprintf("has(self.transport) && self.transport == '%s'", operatorv1.TLSTransport)
	return []rule{
		{Rule: fmt.Sprintf("!has(self.tls) || (%s)", isTLS), Message: tlsOnlyMessage, FieldPath: ".tls", Reason: forbidden},
		{Rule: fmt.Sprintf("!(%s) || has(self.tls)", isTLS), Message: tlsRequiredMessage, FieldPath: ".tls", Reason: required},
	}
}

// upstreamRules are the cross-field rules of one upstream resolver.
func upstreamRules() []rule {
	is := func(t operatorv1.UpstreamType) string { return fmt.Sprintf("has(self.type) && self.type == '%s'", t) }
	return []rule{
		{Rule: fmt.Sprintf("!(%s) || !has(self.address) || self.address == ''", is(operatorv1.SystemResolvConfType)),
			Message: notSystemMessage, FieldPath: ".address", Reason: forbidden},
		{Rule: fmt.Sprintf("!(%s) || !has(self.port) || self.port == 0", is(operatorv1.SystemResolvConfType)),
			Message: notSystemMessage, FieldPath: ".port", Reason: forbidden},
		{Rule: fmt.Sprintf("!(%s) || (has(self.address) && self.address != '')", is(operatorv1.NetworkResolverType)),
			Message: networkMessage, FieldPath: ".address", Reason: required},
	}
}

// addValidations puts the rules, and the bounds they need, into the DNS
// schema root (the inlined openAPIV3Schema).
func addValidations(root map[string]any) error {
	var errs []string
	at := func(path string) map[string]any {
		node := root
		for _, step := range strings.Split(path, ".") {
			if step == "" {
				continue
			}
			var next map[string]any
			if step == "[]" {
				next, _ = node["items"].(map[string]any)
			} else {
				props, _ := node["properties"].(map[string]any)
				next, _ = props[step].(map[string]any)
			}
			if next == nil {
				errs = append(errs, "no schema at "+path)
				return map[string]any{}
			}
			node = next
		}
		return node
	}
	add := func(path string, rules ...rule) {
		node := at(path)
		list, _ := node["x-kubernetes-validations"].([]any)
		for _, r := range rules {
			list = append(list, r)
		}
		node["x-kubernetes-validations"] = list
	}
	bound := func(path string, n int) { at(path)["maxLength"] = n }
	need := func(path string, fields ...string) {
		node := at(path)
		req, _ := node["required"].([]any)
		for _, f := range fields {
			req = append(req, f)
		}
		node["required"] = req
	}

	// The singleton name. A CEL rule at the root may read metadata.name
	// but not name it as its fieldPath, while the root's metadata schema
	// may restrict name (apiextensions' structural metadata invariants):
	// an enum refuses every other name at metadata.name, as the server.
	at("metadata")["properties"] = map[string]any{"name": map[string]any{
		"type": "string", "enum": []any{operatorv1.DefaultName},
	}}

	const fp = "spec.pluginConfig.forwardPlugins.[]"
	need(fp, "domain", "nameServers")
	bound(fp+".domain", maxSubdomainLength)
	add(fp+".domain", nonEmpty("", ""), rule{Rule: "self != '.'", Message: rootDomainMessage}, subdomainRule("."))
	add(fp+".domain", autopathRules()...)
	bound(fp+".nameServers.[]", maxNameServerLength)
	add(fp+".nameServers.[]", nameServerRules()...)

	const ur = "spec.upstreamResolvers"
	need(ur+".upstreams.[]", "type")
	add(ur+".upstreams.[]", upstreamRules()...)
	bound(ur+".upstreams.[].address", maxAddressLength)
	add(ur+".upstreams.[].address", addressRule())

	for _, tc := range []string{fp + ".transportConfig", ur + ".transportConfig"} {
		add(tc, transportRules()...)
		add(tc+".tls", nonEmpty(".serverName", tlsRequiredMessage))
		bound(tc+".tls.serverName", maxSubdomainLength)
		add(tc+".tls.serverName", subdomainRule())
		add(tc+".tls.caBundle", nonEmpty(".name", ""))
		bound(tc+".tls.caBundle.name", maxSubdomainLength)
		add(tc+".tls.caBundle.name", subdomainRule())
	}

	for _, ttl := range []string{"positiveTTL", "negativeTTL"} {
		add("spec.cache."+ttl, rule{Rule: "duration(self) >= duration('1s')", Message: cacheTTLMessage})
	}
	if len(errs) > 0 {
		return fmt.Errorf("DNS CRD validations: %s", strings.Join(errs, "; "))
	}
	return nil
}
