// Package nodecachenet gives the node cache (`dnsplane nodecache`) its
// place in the node's network, as NodeLocal DNSCache's node-cache does
// (KEP-1024, kubernetes/dns cmd/node-cache): a dummy interface holding the
// link-local listen address(es), 169.254.20.10 by default, and rules that
// keep DNS to and from those addresses out of conntrack (NOTRACK), so that
// queries skip kube-proxy's DNAT and the conntrack races behind the
// well-known 5 s lookups (kubernetes#56903).
//
// The rules live in an nftables table of their own, written over netlink
// (github.com/google/nftables), not with iptables binaries: the node cache
// image has no shell and no iptables, and an iptables binary would have to
// match the node's backend (legacy or nft) to be seen by the kernel rules
// kube-proxy writes. A table of our own in a raw-priority chain (-300,
// before conntrack at -200) works next to both: iptables-legacy's raw
// table and iptables-nft's `ip raw` table run at the same hook and
// priority, and neither kube-proxy mode (iptables, nftables or IPVS)
// flushes tables it does not own. See docs/kubernetes.md, "The node cache".
//
// Several instances may run on one node at once: a DaemonSet rolling
// update with maxSurge 1 and maxUnavailable 0 starts the new pod next to
// the old one, both serving the address through SO_REUSEPORT. Each
// instance holds a shared flock on a file in a directory the instances
// share (a hostPath, /run/dnsplane-nodecache); at exit an instance tears
// the interface and rules down only when it can take that lock
// exclusively, i.e. when no other instance runs. A crashed instance's lock
// goes with its process, and the next Setup adopts whatever it left.
package nodecachenet
