// Package searchopt is the node cache's autopath tagging plugin: for a query
// name <base>.search.<ns>.<cluster-domain>.ap.k8s.io. it attaches the EDNS0
// search list option (see plugin/pkg/searchpath) built from the derived
// cluster search list and the node's host search list, and passes the query
// on. A client-sent option with the same code is always removed first, so
// clients never choose the list the cluster DNS expands with.
package searchopt

import (
	"context"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/dnsplane/dnsplane/plugin/pkg/searchpath"
	"github.com/miekg/dns"
)

const pluginName = "searchopt"

// SearchOpt is the plugin handler.
type SearchOpt struct {
	Next plugin.Handler

	// ClusterDomain is the cluster domain, without a trailing dot.
	ClusterDomain string
	// Code is the EDNS0 local option code carrying the search list.
	Code uint16
	// HostSearch is the node's host search list, appended after the
	// derived list (truncated from the end when the limits require).
	HostSearch []string
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
	if !ok || !s.tag(r, n) {
		unparsableCount.WithLabelValues(server).Inc()
		return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
	}
	taggedCount.WithLabelValues(server).Inc()
	return plugin.NextOrFailure(s.Name(), s.Next, ctx, w, r)
}

// tag attaches the search list option to r, dropping host search entries
// from the end until the list fits the searchpath limits. It reports false
// (and leaves r untouched) only when even the derived list alone is not a
// valid option value, e.g. a namespace label with characters no search
// domain may hold.
func (s *SearchOpt) tag(r *dns.Msg, n searchpath.Name) bool {
	derived := searchpath.Derived(n.Namespace, n.ClusterDomain)
	for k := len(s.HostSearch); k >= 0; k-- {
		list := make([]string, 0, len(derived)+k)
		list = append(list, derived...)
		list = append(list, s.HostSearch[:k]...)
		if err := searchpath.SetOption(r, s.Code, list); err == nil {
			return true
		}
	}
	return false
}
