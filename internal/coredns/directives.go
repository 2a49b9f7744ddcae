// Package coredns is the CoreDNS runtime of dnsplane's cluster DNS
// (`dnsplane dns`) and node cache (`dnsplane nodecache`): it runs CoreDNS
// as a Go library (Start), applies changed Corefiles from a file or a
// ConfigMap with a graceful reload, and links the stock plugins a cluster
// DNS needs, our searchexpand and searchopt plugins, and our own ordered
// directive list. Corefiles are built by internal/corefile, which links
// none of this.
package coredns

import (
	"slices"

	// Stock CoreDNS plugins, registered by their init functions.
	_ "github.com/coredns/coredns/plugin/autopath"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/bufsize"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/chaos"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/rewrite"
	_ "github.com/coredns/coredns/plugin/template"

	// Our plugins.
	_ "github.com/dnsplane/dnsplane/plugin/loopguard"
	_ "github.com/dnsplane/dnsplane/plugin/searchexpand"
	_ "github.com/dnsplane/dnsplane/plugin/searchopt"
	_ "github.com/dnsplane/dnsplane/plugin/warmstack"
)

// directives is CoreDNS v1.15.0's default order (core/dnsserver/zdirectives.go)
// restricted to the plugins compiled in above, with ours inserted:
// searchexpand and searchopt sit after autopath and before cache, so that
// searchexpand's candidate lookups go through cache and searchopt tags a
// query before it is cached and forwarded. loopguard sits right before
// forward, the one plugin that sends queries on: whatever reaches forward
// (a query, autopath's and searchexpand's candidates, cache's prefetch)
// passes it and carries its marker, and the queries cache, kubernetes,
// hosts or template answer cost it nothing (plugin/loopguard/README.md).
// warmstack comes first, so that the whole chain runs on its workers
// (plugin/warmstack/README.md).
var directives = []string{
	"warmstack",
	"reload",
	"bufsize",
	"bind",
	"ready",
	"health",
	"prometheus",
	"errors",
	"log",
	"chaos",
	"loadbalance",
	"rewrite",
	"autopath",
	"searchexpand",
	"searchopt",
	"cache",
	"template",
	"hosts",
	"kubernetes",
	"loop",
	"loopguard",
	"forward",
}

// Directives returns the ordered plugin list dnsplane's servers use (a copy).
func Directives() []string { return slices.Clone(directives) }
