// Package kubernetesservice keeps the kubernetes Service in default and its
// Endpoints and EndpointSlice at the addresses of the API servers sharing
// one etcd, as kube-apiserver's kubernetesservice controller and lease
// endpoint reconciler do (k8s.io/kubernetes/pkg/controlplane/controller/kubernetesservice
// and pkg/controlplane/reconcilers; docs/apiserver.md, "What the API
// server maintains itself").
//
// It is not those packages used as libraries, which the rest of dnsplane
// prefers, because of what linking them costs every dnsplane process, the
// cluster DNS and node cache on every node included (docs/operations.md,
// "Memory of the data plane"): reconcilers' lease.go builds its storage
// with k8s.io/apiserver/pkg/storage/storagebackend/factory, so the two
// packages link 55 more packages (the etcd3 storage, API priority and
// fairness, the egress selector and konnectivity client) whose inits
// allocate 627 kB in every process, 465 kB of it factory's package-level
// zap logger; kubernetesservice needs reconcilers for its
// EndpointReconciler type. The behaviour is theirs, field for field and
// step for step; upstream_test.go runs upstream's reconciler beside this
// one over the same cases (tests may link what the binary must not).
package kubernetesservice
