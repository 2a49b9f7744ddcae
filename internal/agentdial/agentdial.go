// Package agentdial decides which node agent endpoints the API server may
// dial for pods/exec (issue 22 item 4, docs/apiserver.md "Which agents the
// API server dials"). The API server dials a Node's status.addresses and
// status.daemonEndpoints.kubeletEndpoint.port with its kubelet-client
// certificate; whoever may write a Node's status could otherwise point it
// at any host:port (etcd's client port, a service on the host's loopback)
// and read that port's state from the error. kube-apiserver relies on the
// Node authorizer alone; dnsplane also allow-lists the endpoints.
package agentdial

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// DefaultPort is the one agent port Rules allow when they name none:
// kubelet's (and `dnsplane agent`'s) --port.
const DefaultPort = 10250

// Rules allow an endpoint by its address and port, for agents the API
// server's process does not run itself.
type Rules struct {
	// Networks are where agents are. Empty: any address that is not
	// special (loopback, link-local, unspecified, multicast), since those
	// reach the API server's own host or nothing a Node should name.
	Networks []netip.Prefix
	// Ports are the agents' exec ports; empty = DefaultPort.
	Ports []uint16
	// Denied are never dialed, whatever Networks say: the service CIDR and
	// the pods' CIDRs, which are not where agents listen.
	Denied []netip.Prefix
}

// Allow returns why ap may not be dialed as node's agent, or nil.
func (r Rules) Allow(node string, ap netip.AddrPort) error {
	addr := ap.Addr().Unmap()
	for _, p := range r.Denied {
		if p.Contains(addr) {
			return refused(node, ap, fmt.Sprintf("%s is in %s, which holds no agents", addr, p))
		}
	}
	switch {
	case len(r.Networks) > 0:
		if !slices.ContainsFunc(r.Networks, func(p netip.Prefix) bool { return p.Contains(addr) }) {
			return refused(node, ap, fmt.Sprintf("%s is not in the agents' networks (%s)", addr, prefixes(r.Networks)))
		}
	case addr.IsLoopback(), addr.IsLinkLocalUnicast(), addr.IsUnspecified(), addr.IsMulticast(), addr.IsInterfaceLocalMulticast():
		return refused(node, ap, fmt.Sprintf("%s is a loopback, link-local, unspecified or multicast address", addr))
	}
	ports := r.Ports
	if len(ports) == 0 {
		ports = []uint16{DefaultPort}
	}
	if !slices.Contains(ports, ap.Port()) {
		return refused(node, ap, fmt.Sprintf("port %d is not an agent port (%s)", ap.Port(), portList(ports)))
	}
	return nil
}

// Endpoints allow exactly the endpoint the function reports for a node:
// the exec servers of the agents that run in the API server's own process
// (`dnsplane up`), which bind ports of their choosing on loopback.
type Endpoints func(node string) (netip.AddrPort, bool)

// Allow returns why ap may not be dialed as node's agent, or nil.
func (e Endpoints) Allow(node string, ap netip.AddrPort) error {
	if own, ok := e(node); ok && own.Addr().Unmap() == ap.Addr().Unmap() && own.Port() == ap.Port() {
		return nil
	}
	return refused(node, ap, fmt.Sprintf("it is not the exec server of node %q's agent", node))
}

// Policy is what Any combines: Rules and Endpoints are.
type Policy interface {
	Allow(node string, ap netip.AddrPort) error
}

// Any allows what one of its policies allows; otherwise the error is the
// first's.
type Any []Policy

// Allow returns why ap may not be dialed as node's agent, or nil.
func (a Any) Allow(node string, ap netip.AddrPort) error {
	var first error
	for _, p := range a {
		err := p.Allow(node, ap)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		return refused(node, ap, "no agent endpoints are allowed")
	}
	return first
}

// refused is the error for an endpoint not dialed: it says why from the
// rules alone, never from trying it, so it tells nothing about the port.
func refused(node string, ap netip.AddrPort, why string) error {
	return fmt.Errorf("the API server does not dial %s for node %q's agent: %s", ap, node, why)
}

func prefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

func portList(ps []uint16) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}
