package dnsspec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// ValidateName is the DNS resource's name rule: the resource is a
// singleton, as the operator reconciles only the object named "default".
// It has the shape of apimachinery's ValidateNameFunc; a generateName
// (prefix true) can never produce the name, so it is refused too.
func ValidateName(name string, prefix bool) []string {
	if prefix || name != operatorv1.DefaultName {
		return []string{fmt.Sprintf("must be %q: the DNS resource is a singleton", operatorv1.DefaultName)}
	}
	return nil
}

// ValidateSpec checks a whole spec (at path, normally "spec") against the
// rules, with clusterDomain the cluster domain of the cluster DNS ("" is
// cluster.local).
func ValidateSpec(spec *operatorv1.DNSSpec, clusterDomain string, path *field.Path) field.ErrorList {
	return ValidateSpecUpdate(spec, nil, clusterDomain, path)
}

// ValidateSpecUpdate checks spec replacing old (nil on create). Parts of
// the spec that the update leaves as they were are not checked again
// (ratcheting, as Kubernetes does when validation gets stricter): a DNS
// stored before a rule existed can still be updated elsewhere, and its
// status written, and the renderer reports what it leaves out.
func ValidateSpecUpdate(spec, old *operatorv1.DNSSpec, clusterDomain string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	fps := spec.PluginConfig.ForwardPlugins
	fpPath := path.Child("pluginConfig", "forwardPlugins")
	// An update that does not lengthen a list stored before the bound
	// existed passes, so that it can be shortened step by step.
	if n := len(fps); n > MaxForwardPlugins && (old == nil || n > len(old.PluginConfig.ForwardPlugins)) {
		errs = append(errs, field.TooMany(fpPath, n, MaxForwardPlugins))
	}
	for i := range fps {
		if old != nil && unchangedForwardPlugin(old, &fps[i]) {
			continue
		}
		errs = append(errs, ValidateForwardPluginAt(fps, i, clusterDomain, fpPath)...)
	}
	if old == nil || !unchangedUpstreamResolvers(old, spec) {
		errs = append(errs, ValidateUpstreamResolvers(&spec.UpstreamResolvers, path.Child("upstreamResolvers"))...)
	}
	if old == nil || !reflect.DeepEqual(spec.Cache, old.Cache) {
		errs = append(errs, ValidateCache(spec.Cache, path.Child("cache"))...)
	}
	if old == nil || spec.LogLevel != old.LogLevel {
		errs = append(errs, ValidateLogLevel(spec.LogLevel, path.Child("logLevel"))...)
	}
	if old == nil || spec.ManagementState != old.ManagementState {
		errs = append(errs, ValidateManagementState(spec.ManagementState, path.Child("managementState"))...)
	}
	return errs
}

// ValidateForwardPluginAt checks fps[i], at path.Index(i): its own rules
// (ValidateForwardPlugin) and that no earlier forward plugin has its
// domain. The first of two plugins with one domain is the valid one.
func ValidateForwardPluginAt(fps []operatorv1.ForwardPlugin, i int, clusterDomain string, path *field.Path) field.ErrorList {
	p := path.Index(i)
	errs := ValidateForwardPlugin(&fps[i], clusterDomain, p)
	if d := fps[i].Domain; d != "" && slices.ContainsFunc(fps[:i], func(o operatorv1.ForwardPlugin) bool { return o.Domain == d }) {
		// CoreDNS refuses a zone served twice on one port ("cannot serve
		// dns://…:5353 - it is already defined"), and the longest-suffix
		// rule could not choose between them anyway.
		errs = append(errs, field.Duplicate(p.Child("domain"), d))
	}
	return errs
}

// ValidateForwardPlugin checks one forward plugin at path.
func ValidateForwardPlugin(fp *operatorv1.ForwardPlugin, clusterDomain string, path *field.Path) field.ErrorList {
	errs := validateForwardedDomain(fp.Domain, ClusterDomain(clusterDomain), path.Child("domain"))
	tls := IsTLS(fp.TransportConfig)
	nsPath := path.Child("nameServers")
	switch n := len(fp.NameServers); {
	case n == 0:
		errs = append(errs, field.Required(nsPath, "at least 1 nameserver is required"))
	case n > MaxNameServers:
		errs = append(errs, field.TooMany(nsPath, n, MaxNameServers))
	}
	seen := map[string]bool{}
	for j, s := range fp.NameServers {
		addr, port, err := ParseNameServer(nsPath.Index(j), s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		key := endpoint(addr, port, tls)
		if seen[key] {
			errs = append(errs, field.Duplicate(nsPath.Index(j), s))
		}
		seen[key] = true
	}
	errs = append(errs, validateEnum(fp.Policy, policies, path.Child("policy"))...)
	errs = append(errs, ValidateTransportConfig(fp.TransportConfig, path.Child("transportConfig"))...)
	errs = append(errs, validateEnum(fp.ProtocolStrategy, protocolStrategies, path.Child("protocolStrategy"))...)
	return errs
}

// validateForwardedDomain checks a forward plugin's domain: an RFC 1123
// subdomain, not the root, and clear of the zones the cluster DNS answers
// itself.
func validateForwardedDomain(d, clusterDomain string, path *field.Path) field.ErrorList {
	switch d {
	case "":
		return field.ErrorList{field.Required(path, "")}
	case ".":
		return field.ErrorList{field.Invalid(path, d, `must not be the root domain ".": spec.upstreamResolvers configure where its names are resolved`)}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(d) {
		errs = append(errs, field.Invalid(path, d, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	// A forwarded domain above, at or below a zone the cluster DNS serves
	// itself would take that zone's names away from it: CoreDNS routes a
	// query to the server block with the longest matching zone, so
	// forwarding "local" would send every cluster.local query to the
	// forwarder. OpenShift documents the cluster domain rule and never
	// enforced it ("results may be catastrophic", enhancements PR #68).
	for _, own := range []struct{ zone, what, why string }{
		{clusterDomain, "the cluster domain", "the cluster DNS answers those names itself"},
		{AutopathZone, "the autopath zone", "the cluster DNS expands autopath names itself"},
	} {
		var rel string
		switch {
		case d == own.zone:
			rel = fmt.Sprintf("must not be %s %q", own.what, own.zone)
		case strings.HasSuffix(d, "."+own.zone):
			rel = fmt.Sprintf("must not be a subdomain of %s %q", own.what, own.zone)
		case strings.HasSuffix(own.zone, "."+d):
			rel = fmt.Sprintf("must not be a parent domain of %s %q", own.what, own.zone)
		default:
			continue
		}
		errs = append(errs, field.Invalid(path, d, rel+": "+own.why))
	}
	return errs
}

// ValidateUpstreamResolvers checks the upstream resolvers at path. An
// empty upstream list stands for its default, one SystemResolvConf.
func ValidateUpstreamResolvers(u *operatorv1.UpstreamResolvers, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	tls := IsTLS(u.TransportConfig)
	upsPath := path.Child("upstreams")
	if n := len(u.Upstreams); n > MaxNameServers {
		errs = append(errs, field.TooMany(upsPath, n, MaxNameServers))
	}
	if tls && len(u.Upstreams) == 0 {
		errs = append(errs, field.Required(upsPath, "Network upstreams are required when transport is TLS"))
	}
	seen := map[string]bool{}
	for i, up := range u.Upstreams {
		p := upsPath.Index(i)
		key, upErrs := validateUpstream(up, tls, p)
		errs = append(errs, upErrs...)
		if key == "" {
			continue
		}
		if seen[key] {
			errs = append(errs, field.Duplicate(p, key))
		}
		seen[key] = true
	}
	errs = append(errs, validateEnum(u.Policy, policies, path.Child("policy"))...)
	errs = append(errs, ValidateTransportConfig(u.TransportConfig, path.Child("transportConfig"))...)
	errs = append(errs, validateEnum(u.ProtocolStrategy, protocolStrategies, path.Child("protocolStrategy"))...)
	return errs
}

// validateUpstream checks one upstream resolver and returns its identity
// for duplicate checks ("" when it is invalid).
func validateUpstream(up operatorv1.Upstream, tls bool, path *field.Path) (string, field.ErrorList) {
	switch up.Type {
	case "":
		return "", field.ErrorList{field.Required(path.Child("type"), "")}
	case operatorv1.SystemResolvConfType:
		var errs field.ErrorList
		if up.Address != "" {
			errs = append(errs, field.Forbidden(path.Child("address"), "may not be set when type is SystemResolvConf"))
		}
		if up.Port != 0 {
			errs = append(errs, field.Forbidden(path.Child("port"), "may not be set when type is SystemResolvConf"))
		}
		if tls {
			// The nameservers of a node's resolv.conf are not known when
			// the Corefile is written, so no TLS server name can be
			// checked against them.
			errs = append(errs, field.Invalid(path.Child("type"), up.Type, "must be Network when transport is TLS"))
		}
		if len(errs) > 0 {
			return "", errs
		}
		return string(up.Type), nil
	case operatorv1.NetworkResolverType:
		var errs field.ErrorList
		if up.Address == "" {
			errs = append(errs, field.Required(path.Child("address"), "required when type is Network"))
		} else {
			errs = append(errs, validation.IsValidIP(path.Child("address"), up.Address)...)
		}
		if up.Port < 0 || up.Port > 65535 {
			errs = append(errs, field.Invalid(path.Child("port"), up.Port, validation.InclusiveRangeError(1, 65535)))
		}
		if len(errs) > 0 {
			return "", errs
		}
		addr, _, _ := ParseNameServer(path.Child("address"), up.Address) // valid: IsValidIP accepted it
		return endpoint(addr, uint16(up.Port), tls), nil
	default:
		return "", field.ErrorList{field.NotSupported(path.Child("type"), up.Type, upstreamTypes)}
	}
}

// ValidateTransportConfig checks a transport configuration at path; nil is
// cleartext.
func ValidateTransportConfig(tc *operatorv1.DNSTransportConfig, path *field.Path) field.ErrorList {
	if tc == nil {
		return nil
	}
	tlsPath := path.Child("tls")
	switch tc.Transport {
	case "", operatorv1.CleartextTransport:
		if tc.TLS != nil {
			return field.ErrorList{field.Forbidden(tlsPath, "may only be set when transport is TLS")}
		}
		return nil
	case operatorv1.TLSTransport:
	default:
		return field.ErrorList{field.NotSupported(path.Child("transport"), tc.Transport, transports)}
	}
	if tc.TLS == nil {
		return field.ErrorList{field.Required(tlsPath, "required when transport is TLS")}
	}
	var errs field.ErrorList
	if sn := tc.TLS.ServerName; sn == "" {
		errs = append(errs, field.Required(tlsPath.Child("serverName"), "required when transport is TLS"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(sn) {
			errs = append(errs, field.Invalid(tlsPath.Child("serverName"), sn, msg))
		}
	}
	if ca := tc.TLS.CABundle; ca != nil {
		namePath := tlsPath.Child("caBundle", "name")
		if ca.Name == "" {
			errs = append(errs, field.Required(namePath, ""))
		} else {
			// A ConfigMap's name rule.
			for _, msg := range validation.IsDNS1123Subdomain(ca.Name) {
				errs = append(errs, field.Invalid(namePath, ca.Name, msg))
			}
		}
	}
	return errs
}

// MinCacheTTL is the shortest cache TTL: the Corefile's cache plugin
// takes whole seconds, and 0 would turn caching off.
const MinCacheTTL = time.Second

// ValidateCache checks the cache configuration at path; nil is the
// defaults.
func ValidateCache(c *operatorv1.DNSCache, path *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	for _, ttl := range []struct {
		name string
		d    *metav1.Duration
	}{{"positiveTTL", c.PositiveTTL}, {"negativeTTL", c.NegativeTTL}} {
		if ttl.d != nil && ttl.d.Duration < MinCacheTTL {
			errs = append(errs, field.Invalid(path.Child(ttl.name), ttl.d.Duration.String(), "must be at least 1s"))
		}
	}
	return errs
}

// ValidateLogLevel checks a log level at path; empty is the default.
func ValidateLogLevel(l operatorv1.DNSLogLevel, path *field.Path) field.ErrorList {
	return validateEnum(l, logLevels, path)
}

// ValidateManagementState checks a management state at path; empty is the
// default.
func ValidateManagementState(m operatorv1.ManagementState, path *field.Path) field.ErrorList {
	return validateEnum(m, managementStates, path)
}

// validateEnum checks that v is empty (the default applies) or one of
// values, exactly.
func validateEnum[T ~string](v T, values []T, path *field.Path) field.ErrorList {
	if v == "" || slices.Contains(values, v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, v, values)}
}
