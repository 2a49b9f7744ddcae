// Package searchopt is the node cache's autopath tagging plugin: for a query
// name <base>.search.<ns>.<cluster-domain>.ap.k8s.io. it attaches the EDNS0
// search list option (see plugin/pkg/searchpath) built from the derived
// cluster search list and the node's host search list, and passes the query
// on. A client-sent option with the same code is always removed first, so
// clients never choose the list the cluster DNS expands with.
package searchopt

import (
	"context"
	"strings"
	"sync"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
	"github.com/miekg/dns"
)

const pluginName = "searchopt"

var log = clog.NewWithPlugin(pluginName)

// SearchOpt is the plugin handler.
type SearchOpt struct {
	Next plugin.Handler

	// ClusterDomain is the cluster domain, without a trailing dot.
	ClusterDomain string
	// Code is the EDNS0 local option code carrying the search list.
	Code uint16
	// HostSearch is the node's host search list, appended after the
	// derived list (truncated from the end when the limits require). Its
	// entries must be valid search domains, as setup's NormalizeDomain
	// makes them: with an invalid one no query is tagged.
	HostSearch []string

	// trimmedOnce makes the warning about a trimmed host search list
	// appear once per plugin instance (once per Corefile load), not once
	// per query; the metric counts every query.
	trimmedOnce sync.Once
}

// Name implements plugin.Handler.
func (s *SearchOpt) Name() string { return pluginName }

// ServeDNS implements plugin.Handler.
func (s *SearchOpt) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	server := metrics.WithServer(ctx)
	if _, found, _ := searchpath.GetOption(r, s.Code); found {
		searchpath.StripOption(r, s.Code)
		strippedCount.WithLabelValues(server).Inc()
	}
	if len(r.Question) == 0 {
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	qname := r.Question[0].Name
	if !searchpath.InZone(searchpath.Zone, qname) {
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	n, ok := searchpath.Parse(qname, s.ClusterDomain)
	if !ok || !s.tag(ctx, r, n) {
		unparsableCount.WithLabelValues(server).Inc()
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	taggedCount.WithLabelValues(server).Inc()
	return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
}

// tag attaches the search list option to r, with as many host search
// entries, from the start, as fit the searchpath limits after the derived
// list; the rest are dropped, counted and logged once. It reports false
// (and leaves r untouched) only when the list is not a valid option value,
// e.g. a namespace label with characters no search domain may hold.
func (s *SearchOpt) tag(ctx context.Context, r *dns.Msg, n searchpath.Name) bool {
	derived := searchpath.Derived(n.Namespace, n.ClusterDomain)
	k := s.hostFit(derived)
	list := make([]string, 0, len(derived)+k)
	list = append(list, derived...)
	list = append(list, s.HostSearch[:k]...)
	if err := searchpath.SetOption(r, s.Code, list); err != nil {
		return false
	}
	if k < len(s.HostSearch) {
		trimmedCount.WithLabelValues(metrics.WithServer(ctx)).Inc()
		s.trimmedOnce.Do(func() {
			log.Warningf("host search list has %d entries; only the first %d fit the search list option "+
				"(at most %d entries and %d bytes, with the %d cluster entries for namespace %q), so %q and later are not tried "+
				"(counted in coredns_searchopt_host_search_trimmed_total; logged once)",
				len(s.HostSearch), k, searchpath.MaxEntries, searchpath.MaxChars, len(derived), n.Namespace, s.HostSearch[k])
		})
	}
	return true
}

// hostFit returns how many host search entries, from the start, fit in the
// option after derived: at most MaxEntries entries and MaxChars bytes
// joined with commas. The cluster entries depend on the namespace, so the
// byte count is worked out per query; it is a sum over at most 32 entries,
// where trying shorter lists until one encoded cost one allocation and
// encoding per dropped entry.
func (s *SearchOpt) hostFit(derived []string) int {
	entries, chars := len(derived), len(derived)-1
	for _, d := range derived {
		chars += len(d)
	}
	for k, h := range s.HostSearch {
		chars += 1 + len(strings.TrimSuffix(h, "."))
		entries++
		if entries > searchpath.MaxEntries || chars > searchpath.MaxChars {
			return k
		}
	}
	return len(s.HostSearch)
}
