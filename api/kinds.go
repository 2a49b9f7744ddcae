// Package api is the root of dnsplane's public Go types. It maps
// apiVersion/kind pairs to the Go type that decodes them, so offline tools and
// the API server agree on which kinds exist and what fields they have.
package api

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dpappsv1 "github.com/dnsplane/dnsplane/api/apps/v1"
	dpbatchv1 "github.com/dnsplane/dnsplane/api/batch/v1"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	dpoperatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// New returns a pointer to a new, empty object of the Go type that decodes
// gvk, and false when dnsplane does not serve that kind.
func New(gvk schema.GroupVersionKind) (any, bool) {
	f, ok := kinds[gvk]
	if !ok {
		return nil, false
	}
	return f(), true
}

// Kinds returns every kind New knows.
func Kinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(kinds))
	for gvk := range kinds {
		out = append(out, gvk)
	}
	return out
}

func core(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Version: "v1", Kind: kind}
}
func apps(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: kind}
}
func batch(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: kind}
}

// kinds is read-only after package initialisation.
var kinds = map[schema.GroupVersionKind]func() any{
	// Pod template carriers: dnsplane's types, which add spec.dnsParams.
	core("Pod"):                   func() any { return &dpcorev1.Pod{} },
	core("PodTemplate"):           func() any { return &dpcorev1.PodTemplate{} },
	core("ReplicationController"): func() any { return &dpcorev1.ReplicationController{} },
	apps("Deployment"):            func() any { return &dpappsv1.Deployment{} },
	apps("ReplicaSet"):            func() any { return &dpappsv1.ReplicaSet{} },
	apps("StatefulSet"):           func() any { return &dpappsv1.StatefulSet{} },
	apps("DaemonSet"):             func() any { return &dpappsv1.DaemonSet{} },
	batch("Job"):                  func() any { return &dpbatchv1.Job{} },
	batch("CronJob"):              func() any { return &dpbatchv1.CronJob{} },

	// Everything else the API server serves: upstream types unchanged.
	core("Namespace"):      func() any { return &corev1.Namespace{} },
	core("Service"):        func() any { return &corev1.Service{} },
	core("Endpoints"):      func() any { return &corev1.Endpoints{} }, //nolint:staticcheck // SA1019: deprecated for EndpointSlice, but kube-apiserver still serves Endpoints, so dnsplane does too
	core("ConfigMap"):      func() any { return &corev1.ConfigMap{} },
	core("Secret"):         func() any { return &corev1.Secret{} },
	core("Node"):           func() any { return &corev1.Node{} },
	core("Event"):          func() any { return &corev1.Event{} },
	core("ServiceAccount"): func() any { return &corev1.ServiceAccount{} },
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}: func() any { return &discoveryv1.EndpointSlice{} },
	{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}:      func() any { return &coordinationv1.Lease{} },

	// dnsplane's own API.
	{Group: dpoperatorv1.GroupName, Version: "v1", Kind: "DNS"}: func() any { return &dpoperatorv1.DNS{} },
}
