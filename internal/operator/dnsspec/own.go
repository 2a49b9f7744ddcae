package dnsspec

import (
	"fmt"
	"net/netip"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// ValidateNotOwn checks that no forward plugin nameserver and no Network
// upstream resolver of spec names one of own, the addresses the cluster
// DNS (and, in `dnsplane up`, the node cache) serve DNS on: the query
// would come back to the server that forwarded it, and each hop would hold
// another socket until the process ran out (plugin/loopguard now stops
// such a loop at its first repetition, but every query for the names
// would still fail). Parts that old (nil on create) already had are not
// checked again, as in ValidateSpecUpdate: the renderer leaves them out.
func ValidateNotOwn(spec, old *operatorv1.DNSSpec, own []netip.AddrPort, path *field.Path) field.ErrorList {
	if len(own) == 0 {
		return nil
	}
	var errs field.ErrorList
	fps := spec.PluginConfig.ForwardPlugins
	fpPath := path.Child("pluginConfig", "forwardPlugins")
	for i := range fps {
		if old != nil && unchangedForwardPlugin(old, &fps[i]) {
			continue
		}
		errs = append(errs, ValidateForwardPluginNotOwn(&fps[i], own, fpPath.Index(i))...)
	}
	if old == nil || !unchangedUpstreamResolvers(old, spec) {
		errs = append(errs, ValidateUpstreamResolversNotOwn(&spec.UpstreamResolvers, own, path.Child("upstreamResolvers"))...)
	}
	return errs
}

// ValidateForwardPluginNotOwn checks that no nameserver of fp (at path)
// is one of own. Entries that do not parse are left to
// ValidateForwardPlugin.
func ValidateForwardPluginNotOwn(fp *operatorv1.ForwardPlugin, own []netip.AddrPort, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	tls := IsTLS(fp.TransportConfig)
	nsPath := path.Child("nameServers")
	for j, s := range fp.NameServers {
		addr, port, err := ParseNameServer(nsPath.Index(j), s)
		if err != nil {
			continue
		}
		if ap := endpoint(addr, port, tls); isOwn(own, ap) {
			errs = append(errs, field.Invalid(nsPath.Index(j), s, ownDetail(ap)))
		}
	}
	return errs
}

// ValidateUpstreamResolversNotOwn checks that no Network upstream of u
// (at path) is one of own. Invalid entries are left to
// ValidateUpstreamResolvers.
func ValidateUpstreamResolversNotOwn(u *operatorv1.UpstreamResolvers, own []netip.AddrPort, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	tls := IsTLS(u.TransportConfig)
	for i, up := range u.Upstreams {
		p := path.Child("upstreams").Index(i)
		if up.Type != operatorv1.NetworkResolverType || up.Port < 0 || up.Port > 65535 {
			continue
		}
		addr, _, err := ParseNameServer(p.Child("address"), up.Address)
		if err != nil {
			continue
		}
		if ap := endpoint(addr, uint16(up.Port), tls); isOwn(own, ap) {
			errs = append(errs, field.Invalid(p, ap, ownDetail(ap)))
		}
	}
	return errs
}

func isOwn(own []netip.AddrPort, ap string) bool {
	return slices.ContainsFunc(own, func(o netip.AddrPort) bool {
		return netip.AddrPortFrom(o.Addr().Unmap(), o.Port()).String() == ap
	})
}

func ownDetail(ap string) string {
	return fmt.Sprintf("must not be %s, an address this cluster's DNS serves on: the query would come back to it (a forwarding loop)", ap)
}

// unchangedForwardPlugin reports whether old has a forward plugin equal
// to fp once both are defaulted.
func unchangedForwardPlugin(old *operatorv1.DNSSpec, fp *operatorv1.ForwardPlugin) bool {
	d := DefaultedForwardPlugin(*fp)
	return slices.ContainsFunc(old.PluginConfig.ForwardPlugins, func(o operatorv1.ForwardPlugin) bool {
		return reflect.DeepEqual(DefaultedForwardPlugin(o), d)
	})
}

// unchangedUpstreamResolvers reports whether old and spec have the same
// upstream resolvers once defaulted.
func unchangedUpstreamResolvers(old, spec *operatorv1.DNSSpec) bool {
	return reflect.DeepEqual(DefaultedUpstreamResolvers(spec.UpstreamResolvers), DefaultedUpstreamResolvers(old.UpstreamResolvers))
}
