package pod

import (
	"time"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// Subresources are the pods subresources beside status: binding,
// eviction, and the connections kube-apiserver proxies to kubelets (exec,
// attach, log). docs/apiserver.md, "Subresources".
func (s Strategy) Subresources() []rest.Subresource {
	var agents Agents
	now := time.Now
	if s.host != nil {
		agents = s.host.agents
		if s.host.now != nil {
			now = s.host.now
		}
	}
	return []rest.Subresource{binding(now), eviction(now), exec(agents), attach(), logSubresource()}
}

// host is what the subresources need from the API server they run in.
type host struct {
	agents Agents
	now    func() time.Time
}

// WithHost returns s whose subresources reach node agents with agents and
// read the time from now (nil: time.Now).
func (s Strategy) WithHost(agents Agents, now func() time.Time) Strategy {
	s.host = &host{agents: agents, now: now}
	return s
}
