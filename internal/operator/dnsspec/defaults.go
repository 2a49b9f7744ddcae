package dnsspec

import (
	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// Defaults applied to a DNS spec. OpenShift applies most of its defaults
// in the CRD schema (forward plugin policy Random; upstreamResolvers
// defaulting to one SystemResolvConf upstream, port 53 and policy
// Sequential; logLevel Normal) and leaves the rest to the operator at
// render time (an empty managementState means Managed, unset cache TTLs
// mean 900s/30s, an empty transport means cleartext). dnsplane has no CRD
// schema: the DNS strategy applies the schema defaults on create and
// update, so that a stored object shows what it gets, plus
// managementState Managed; the renderer applies Defaulted again for
// objects stored before. Three things stay unset in stored objects on
// purpose: the cache TTLs (the renderer's defaults apply, so a cluster
// that never chose a TTL follows the default), the transport (empty is
// cleartext) and a Network upstream's port (see
// DefaultedUpstreamResolvers).
const (
	DefaultForwardPolicy   = operatorv1.ForwardPolicyRandom     // "to preserve the previous behavior" of CoreDNS's forward
	DefaultUpstreamPolicy  = operatorv1.ForwardPolicySequential // keeps resolv.conf order (OpenShift Bug 1756344)
	DefaultLogLevel        = operatorv1.DNSLogLevelNormal
	DefaultManagementState = operatorv1.Managed
)

// SetDefaults applies the defaults to spec in place.
func SetDefaults(spec *operatorv1.DNSSpec) {
	*spec = Defaulted(*spec)
}

// Defaulted returns spec with the defaults applied. spec itself is not
// changed: the slices that get defaults are copied.
func Defaulted(spec operatorv1.DNSSpec) operatorv1.DNSSpec {
	if fps := spec.PluginConfig.ForwardPlugins; fps != nil {
		spec.PluginConfig.ForwardPlugins = make([]operatorv1.ForwardPlugin, len(fps))
		for i, fp := range fps {
			spec.PluginConfig.ForwardPlugins[i] = DefaultedForwardPlugin(fp)
		}
	}
	spec.UpstreamResolvers = DefaultedUpstreamResolvers(spec.UpstreamResolvers)
	if spec.LogLevel == "" {
		spec.LogLevel = DefaultLogLevel
	}
	if spec.ManagementState == "" {
		spec.ManagementState = DefaultManagementState
	}
	return spec
}

// DefaultedForwardPlugin returns fp with its default policy.
func DefaultedForwardPlugin(fp operatorv1.ForwardPlugin) operatorv1.ForwardPlugin {
	if fp.Policy == "" {
		fp.Policy = DefaultForwardPolicy
	}
	return fp
}

// DefaultedUpstreamResolvers returns u with its defaults: one
// SystemResolvConf upstream when none is listed, policy Sequential.
//
// A Network upstream's port is not defaulted in the object, unlike
// OpenShift's schema default of 53: unset means the transport's port (53,
// or 853 over TLS), as for a forward plugin's nameserver written without
// one, so that switching to TLS does not leave a stored 53 behind.
func DefaultedUpstreamResolvers(u operatorv1.UpstreamResolvers) operatorv1.UpstreamResolvers {
	if len(u.Upstreams) == 0 {
		u.Upstreams = []operatorv1.Upstream{{Type: operatorv1.SystemResolvConfType}}
	}
	if u.Policy == "" {
		u.Policy = DefaultUpstreamPolicy
	}
	return u
}
