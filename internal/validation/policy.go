package validation

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// policyEnabled reports whether opts let new objects use p. Policies that
// upstream Kubernetes knows are never gated.
func policyEnabled(p corev1.DNSPolicy, opts Options) bool {
	switch p {
	case dpcorev1.DNSCustom:
		return opts.PodDNSCustomPolicy
	case dpcorev1.DNSClusterFirstWithAutopath:
		return opts.PodDNSAutopath
	}
	return true
}

// supportedPolicies lists what an error may offer the user: a value whose
// gate is off is left out, as upstream does for disabled enum values, so the
// message never suggests something the server would refuse.
func supportedPolicies(opts Options) []corev1.DNSPolicy {
	var out []corev1.DNSPolicy
	for _, p := range dpcorev1.DNSPolicies() {
		if policyEnabled(p, opts) {
			out = append(out, p)
		}
	}
	return out
}

// validateDNSPolicy checks spec.dnsPolicy. A gated policy stays valid on an
// update whose old object already had it: turning a gate off must not make
// stored objects impossible to update (docs/pod-dns.md, "Ratcheting").
func validateDNSPolicy(p corev1.DNSPolicy, old *dpcorev1.PodSpec, fldPath *field.Path, opts Options) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	known := slices.Contains(dpcorev1.DNSPolicies(), p)
	kept := old != nil && old.DNSPolicy == p
	if !known || (!policyEnabled(p, opts) && !kept) {
		// The typed value, not a string, so the bad value renders through
		// JSON exactly as upstream's does.
		return field.ErrorList{field.NotSupported(fldPath, p, supportedPolicies(opts))}
	}
	return nil
}
