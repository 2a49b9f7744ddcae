// +k8s:deepcopy-gen=package
// +groupName=

// The core group's name is "" (kube's legacy /api/v1). The directory name
// "core" is what client-gen names the group's Go package and accessor
// (CoreV1()); the empty +groupName above makes its client use /api, as
// k8s.io/api/core/v1 does.

// Package v1 holds dnsplane's core/v1 types: the upstream k8s.io/api/core/v1
// types with the pod DNS additions of dnsplane (dnsPolicy Custom and
// ClusterFirstWithAutopath, spec.dnsParams).
//
// Every upstream field is kept by embedding the upstream struct inline, so a
// manifest that decodes into k8s.io/api decodes into these types unchanged.
// Where a carrier holds a pod template, the template field is redeclared at
// the outer level; encoding/json resolves the name to the shallower field, so
// the embedded upstream field of the same name is never used.
package v1
