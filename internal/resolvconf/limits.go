package resolvconf

import (
	"fmt"
	"strings"
)

// Limits kubelet enforces on what it hands the runtime. glibc reads only the
// first three nameservers; 32 paths and 2048 characters are the expanded DNS
// config limits (KEP-2595) that current runtimes accept.
const (
	maxNameservers     = 3
	maxSearchPaths     = 32
	maxSearchListChars = 2048
	// maxSearchPathLen is DNS1123SubdomainMaxLength. Longer entries are
	// dropped, not cut, because some resolvers (glibc 2.28) abort() on them.
	maxSearchPathLen = 253
	// clusterSearchPaths is how many paths ClusterFirst adds to the host's.
	clusterSearchPaths = 3
)

// Event reasons, the same strings kubelet records so existing alerts and
// dashboards keep matching.
const (
	ReasonDNSConfigForming         = "DNSConfigForming"
	ReasonMissingClusterDNS        = "MissingClusterDNS"
	ReasonCheckLimitsForResolvConf = "CheckLimitsForResolvConf"
)

func fitNameservers(servers []string) ([]string, []Warning) {
	if len(servers) <= maxNameservers {
		return servers, nil
	}
	servers = servers[:maxNameservers]
	return servers, []Warning{{
		Reason:  ReasonDNSConfigForming,
		Message: "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: " + strings.Join(servers, " "),
	}}
}

// fitSearches cuts in kubelet's order: count first, then over-long entries,
// then whole entries from the end until the line fits, so the pod's own
// dnsConfig searches (appended last) are the first to go.
func fitSearches(searches []string) ([]string, []Warning) {
	cut := false
	if len(searches) > maxSearchPaths {
		searches = searches[:maxSearchPaths]
		cut = true
	}
	kept := searches[:0:0]
	for _, s := range searches {
		if len(s) > maxSearchPathLen {
			cut = true
			continue
		}
		kept = append(kept, s)
	}
	searches = kept
	for n := joinedLen(searches); n > maxSearchListChars; n = joinedLen(searches) {
		searches = searches[:len(searches)-1]
		cut = true
	}
	if !cut {
		return searches, nil
	}
	return searches, []Warning{{
		Reason:  ReasonDNSConfigForming,
		Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(searches, " "),
	}}
}

// joinedLen is len(strings.Join(s, " ")) without building the string.
func joinedLen(s []string) int {
	if len(s) == 0 {
		return 0
	}
	n := len(s) - 1
	for _, e := range s {
		n += len(e)
	}
	return n
}

// CheckHostLimits reports, once at agent start like kubelet's
// CheckLimitsForResolvConf, a host search list that would make every
// ClusterFirst pod hit the limits. Three paths are reserved for the cluster
// ones when clusterDomain is set. At most one warning, the first problem
// found, as kubelet stops at the first. Open and parse errors of path are the
// caller's to report with the same reason.
func CheckHostLimits(path string, c Config, clusterDomain string) []Warning {
	limit := maxSearchPaths
	if clusterDomain != "" {
		limit -= clusterSearchPaths
	}
	warn := func(msg string) []Warning {
		return []Warning{{Reason: ReasonCheckLimitsForResolvConf, Message: msg}}
	}
	if len(c.Searches) > limit {
		return warn(fmt.Sprintf("Resolv.conf file '%s' contains search line consisting of more than %d domains!", path, limit))
	}
	for _, s := range c.Searches {
		if len(s) > maxSearchPathLen {
			return warn(fmt.Sprintf("Resolv.conf file %q contains a search path which length is more than allowed %d chars!", path, maxSearchPathLen))
		}
	}
	if joinedLen(c.Searches) > maxSearchListChars {
		return warn(fmt.Sprintf("Resolv.conf file '%s' contains search line which length is more than allowed %d chars!", path, maxSearchListChars))
	}
	return nil
}
