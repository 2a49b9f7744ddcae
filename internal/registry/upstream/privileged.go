package upstream

import (
	"fmt"

	"k8s.io/kubernetes/pkg/capabilities"
)

// AllowPrivileged sets kube-apiserver's --allow-privileged for upstream's
// pod validation, which reads it from k8s.io/kubernetes/pkg/capabilities
// (ValidateSecurityContext: `privileged: Forbidden: disallowed by cluster
// policy` when false; the same for Windows hostProcess containers). Like
// kube-apiserver (cmd/kube-apiserver/app/server.go calls capabilities.Setup
// while building its config), call it once at start, before anything
// validates a pod.
//
// The setting is upstream's and process-wide: capabilities keeps the first
// value it is given (a sync.Once), and the first validation without one
// fixes kube's default, false. So one process holds one value; asking for
// another afterwards is an error rather than a server silently validating
// with the first (tests that start several servers in one process).
func AllowPrivileged(allow bool) error {
	// 0 is kube-apiserver's --max-connection-bytes-per-sec default, which
	// only upstream's proxy handlers read; dnsplane proxies exec itself.
	capabilities.Setup(allow, 0)
	if got := capabilities.Get().AllowPrivileged; got != allow {
		return fmt.Errorf("--allow-privileged=%t: this process already validates pods with --allow-privileged=%t, and the setting is process-wide (k8s.io/kubernetes/pkg/capabilities)", allow, got)
	}
	return nil
}
