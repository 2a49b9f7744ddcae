// Package validation holds the API server's pod DNS rules: spec.dnsPolicy,
// spec.dnsConfig and spec.dnsParams of every object that carries a pod spec.
//
// The rules and messages follow upstream Kubernetes so kubectl users see the
// errors they already know; dnsplane adds the Custom and
// ClusterFirstWithAutopath policies and spec.dnsParams (docs/pod-dns.md). The
// KEP-4427 ratchet is implemented as the KEP states it, which accepts a few
// more updates than upstream's approximation (see relaxedSearch).
//
// The package keeps no state: gates arrive as Options on every call, so one
// process can validate under several gate sets at once.
package validation
