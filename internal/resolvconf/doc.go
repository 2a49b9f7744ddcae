// Package resolvconf computes the resolver configuration a pod gets, the way
// kubelet does.
//
// Users move pods between Kubernetes and dnsplane expecting the same
// /etc/resolv.conf, and their resolvers (glibc, musl) break in quiet ways
// when search lists or option sets drift, so every rule kubelet applies is
// reproduced here: how it reads the node's file, which base each dnsPolicy
// starts from, how spec.dnsConfig is merged, where limits cut and the event
// text it emits when they do. Only the two policies kubelet never had
// (Custom and ClusterFirstWithAutopath, docs/pod-dns.md) add rules of their
// own, and they reuse the same merge and limit steps so a pod cannot escape
// them by choosing a new policy.
//
// Where kubelet leaves an order unspecified (it builds option lists from Go
// maps) this package fixes one, because the agent rewrites the file only when
// its bytes change and a random order would rewrite it on every sync.
package resolvconf
