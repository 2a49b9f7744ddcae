// Package controllers holds integration tests that run upstream's
// controllers (k8s.io/kubernetes/pkg/controller/...) in the test process
// against an in-process control plane (controlplanetest), to check what
// the API server does for clients compiled against k8s.io/api: here, that
// spec.dnsParams survives them (docs/pod-dns.md, "dnsParams and
// controllers").
package controllers
