package coredns

import (
	"fmt"
	"sync"

	"github.com/coredns/caddy"
)

// CoreDNS's reload plugin polls caddy's registered Corefile loaders and
// restarts its instance with whatever they return when it differs from the
// Corefile the instance runs. CoreDNS's own main registers a loader for its
// -conf flag; dnsplane starts CoreDNS from text, so without a loader caddy
// hands the plugin CoreDNS's built-in default (.:53 { whoami log }) and the
// plugin tries to replace the running configuration with it.
//
// dnsplane applies Corefile changes itself (RunFromFile, RunFromConfigMap)
// with a graceful restart that keeps track of the new instance. Its loader
// therefore answers with the Corefile the running instance was started
// with: the reload plugin never sees a change and never restarts an
// instance behind dnsplane's back.
//
// caddy's loader registry is process-global and a loader is not told which
// instance asks, so the loader answers only while exactly one instance
// runs; otherwise it returns an error, which the reload plugin skips.

// live is the set of running instances the loader answers for. It is
// package state only because caddy's loader registry is.
var live = &instances{set: map[*caddy.Instance]struct{}{}}

func init() {
	caddy.RegisterCaddyfileLoader("dnsplane", caddy.LoaderFunc(live.load))
}

type instances struct {
	mu  sync.Mutex
	set map[*caddy.Instance]struct{}
}

func (l *instances) add(i *caddy.Instance) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set[i] = struct{}{}
}

func (l *instances) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.set)
}

func (l *instances) remove(i *caddy.Instance) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.set, i)
}

// load implements caddy.Loader for the dns server type.
func (l *instances) load(serverType string) (caddy.Input, error) {
	if serverType != "dns" {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.set) != 1 {
		return nil, fmt.Errorf("%d CoreDNS instances run in this process, so the Corefile to reload is ambiguous; dnsplane applies Corefile changes itself (dns --conf, --configmap)", len(l.set))
	}
	for i := range l.set {
		return i.Caddyfile(), nil
	}
	return nil, nil
}
