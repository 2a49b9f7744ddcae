// Package nodeplan plans the nodes of `dnsplane up --nodes N`: their names,
// pod CIDRs and state dirs (docs/nodes.md). One node keeps the layout `up`
// has always had (the node --node-name, --pod-cidr, <data-dir>/agent), so
// that a data dir and the docs written for it stay true; N nodes are
// node-1…node-N, each with a /24 of the cluster's pod range and a state
// dir under <data-dir>/nodes/.
package nodeplan

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// MaxNodes bounds --nodes: each node costs an agent, a node cache and a
// loopback address on port 53, and the node caches' addresses must stay in
// one /24 with room to move (dnsroles.MoveRange).
const MaxNodes = 16

// ClusterPodRange is the pod range N nodes split when --pod-cidr is left
// at its one-node default: flannel's and kubeadm's usual 10.244.0.0/16.
const ClusterPodRange = "10.244.0.0/16"

// Node is one node `up` runs.
type Node struct {
	Name     string
	PodCIDR  string
	StateDir string // the agent's state dir: pods' files
}

// Flags are the flags of `up` the plan depends on. The *Set fields say the
// user gave the flag (rather than its default).
type Flags struct {
	Nodes       int
	NodeName    string
	NodeNameSet bool
	PodCIDR     string
	PodCIDRSet  bool
}

// Plan returns the nodes for f in dataDir, or an error naming the flag.
func Plan(dataDir string, f Flags) ([]Node, error) {
	if f.Nodes < 1 || f.Nodes > MaxNodes {
		return nil, fmt.Errorf("--nodes %d: want 1 to %d", f.Nodes, MaxNodes)
	}
	if f.Nodes == 1 {
		return []Node{{Name: f.NodeName, PodCIDR: f.PodCIDR, StateDir: SingleStateDir(dataDir)}}, nil
	}
	if f.NodeNameSet {
		return nil, fmt.Errorf("--node-name %q names the one node of --nodes 1; with --nodes %d the nodes are node-1 to node-%d: leave --node-name out",
			f.NodeName, f.Nodes, f.Nodes)
	}
	cluster := ClusterPodRange
	if f.PodCIDRSet {
		cluster = f.PodCIDR
	}
	cidrs, err := SplitPodRange(cluster, f.Nodes)
	if err != nil {
		return nil, fmt.Errorf("--pod-cidr %q: with --nodes %d it is the cluster's pod range, split into a /24 per node: %w", cluster, f.Nodes, err)
	}
	nodes := make([]Node, f.Nodes)
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i+1)
		nodes[i] = Node{Name: name, PodCIDR: cidrs[i], StateDir: StateDir(dataDir, name)}
	}
	return nodes, nil
}

// SplitPodRange gives node i (0-based) the (i+1)-th /24 of cluster, so that
// 10.244.0.0/16 gives node-1 10.244.1.0/24 (the first /24 is left out, as
// the one-node default 10.244.0.0/24 is, so that a data dir that ran one
// node keeps its pods' addresses apart from the new nodes').
func SplitPodRange(cluster string, n int) ([]string, error) {
	p, err := netip.ParsePrefix(cluster)
	if err != nil {
		return nil, fmt.Errorf("want a CIDR such as %s", ClusterPodRange)
	}
	if !p.Addr().Is4() {
		return nil, fmt.Errorf("want an IPv4 range")
	}
	p = p.Masked()
	if p.Bits() > 23 || 1<<(24-p.Bits()) < n+1 {
		return nil, fmt.Errorf("too small: want room for %d /24s after the first, such as %s", n, ClusterPodRange)
	}
	out := make([]string, n)
	base := p.Addr().As4()
	for i := range out {
		// Masked, a prefix of /16 or shorter has a zero third octet and
		// a longer one has room for n+1 /24s: no carry.
		a := [4]byte{base[0], base[1], base[2] + byte(i+1), 0} //nolint:gosec // i < MaxNodes
		out[i] = netip.PrefixFrom(netip.AddrFrom4(a), 24).String()
	}
	return out, nil
}

// SingleStateDir is the agent's state dir when `up` runs one node.
func SingleStateDir(dataDir string) string { return filepath.Join(dataDir, "agent") }

// StateDir is node name's state dir when `up` runs several.
func StateDir(dataDir, name string) string { return filepath.Join(dataDir, "nodes", name) }

// StateDirOf is where `dnsplane exec --data-dir` finds the files of a pod on
// node name: <data-dir>/nodes/<name> when `up` ran several nodes there,
// else <data-dir>/agent.
func StateDirOf(dataDir, name string) string {
	// spec.nodeName is a DNS subdomain once the API server validated it;
	// a name that could leave <data-dir>/nodes is never one of ours.
	if name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`) {
		if fi, err := os.Stat(StateDir(dataDir, name)); err == nil && fi.IsDir() {
			return StateDir(dataDir, name)
		}
	}
	return SingleStateDir(dataDir)
}
