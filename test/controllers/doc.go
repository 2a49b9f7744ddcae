// Package controllers holds integration tests of an in-process control
// plane (controlplanetest) running upstream's controllers
// (k8s.io/kubernetes/pkg/controller/...) as `up` does, to check what
// the API server does for clients compiled against k8s.io/api: here, that
// spec.dnsParams survives them (docs/pod-dns.md, "dnsParams and
// controllers").
package controllers
