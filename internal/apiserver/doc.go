// Package apiserver is dnsplane's Kubernetes-compatible REST API over etcd.
//
// It serves the resources of Registry with the verbs, URL layout, status
// codes and error bodies of kube-apiserver, so the real kubectl and client-go
// work against it: objects are the Go types of package api, stored as JSON
// under <prefix>/<resource>/<namespace>/<name>, and resourceVersion is the
// etcd mod revision, so every update and delete is a compare-and-swap.
//
// Request flow: metrics → authentication → body limit → router → handler
// (decode, default, validate with the pod DNS rules and their ratchets, store).
package apiserver
