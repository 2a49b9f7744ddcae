package service

import (
	"fmt"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// initIPFamilies defaults spec.ipFamilyPolicy and spec.ipFamilies and
// refuses families the cluster does not serve, as kube-apiserver's
// Service storage does before it allocates (initIPFamilyFields,
// pkg/registry/core/service/storage/alloc.go) on every create and update,
// dry runs included, for a cluster with one service range of family fam.
// Headless Services get them too: kube-controller-manager's EndpointSlice
// controller reads ipFamilies to choose the slices' address type, and
// without them logs "Couldn't find ipfamilies for headless service" and
// writes a slice per family.
func initIPFamilies(svc, old *corev1.Service, fam corev1.IPFamily) field.ErrorList {
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName || preferDualStackUnchanged(svc, old) {
		return nil
	}
	headlessSelectorless := spec.ClusterIP == corev1.ClusterIPNone && len(spec.Selector) == 0
	if spec.IPFamilyPolicy == nil {
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
		case headlessSelectorless:
			// Its endpoints are whatever a client writes, of any family.
			spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
		default:
			spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
		}
	}
	policy := *spec.IPFamilyPolicy
	policyPath := field.NewPath("spec", "ipFamilyPolicy")
	var errs field.ErrorList
	if old != nil {
		if policy == corev1.IPFamilyPolicySingleStack {
			// Single-stack with the same addresses and families is the
			// clear intent to drop the secondary ones.
			if slices.Equal(old.Spec.ClusterIPs, spec.ClusterIPs) && len(spec.ClusterIPs) > 1 {
				spec.ClusterIPs = spec.ClusterIPs[:1]
			}
			if slices.Equal(old.Spec.IPFamilies, spec.IPFamilies) && len(spec.IPFamilies) > 1 {
				spec.IPFamilies = spec.IPFamilies[:1]
			}
		} else {
			if reduced(spec.ClusterIPs, old.Spec.ClusterIPs) {
				errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary cluster IP"))
			}
			if reduced(spec.IPFamilies, old.Spec.IPFamilies) {
				errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary IP family"))
			}
		}
	}
	if policy == corev1.IPFamilyPolicySingleStack {
		if len(spec.ClusterIPs) == 2 {
			errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(spec.IPFamilies) == 2 {
			errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	for i, ip := range spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i < len(spec.IPFamilies) {
			continue
		}
		if f := familyOf(ip); f != fam {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), spec.ClusterIPs, fmt.Sprintf("%s is not configured on this cluster", f)))
		} else {
			spec.IPFamilies = append(spec.IPFamilies, f)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if headlessSelectorless {
		// Allowed any family, and both unless single-stack, even on a
		// single-stack cluster.
		if len(spec.IPFamilies) == 0 {
			spec.IPFamilies = []corev1.IPFamily{fam}
		}
		if len(spec.IPFamilies) < 2 && policy != corev1.IPFamilyPolicySingleStack {
			spec.IPFamilies = append(spec.IPFamilies, otherFamily(spec.IPFamilies[0]))
		}
		return nil
	}
	if policy == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(policyPath, spec.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range spec.IPFamilies {
		if f != fam {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{fam}
	}
	return nil
}

// preferDualStackUnchanged is an update of a PreferDualStack Service that
// keeps its policy, addresses and families: upstream leaves it as it is,
// so that a cluster turning dual-stack (or back) never adds or drops an
// address on its own.
func preferDualStackUnchanged(svc, old *corev1.Service) bool {
	if old == nil || svc.Spec.IPFamilyPolicy == nil || old.Spec.Type != svc.Spec.Type {
		return false
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		return false
	}
	prefer := corev1.IPFamilyPolicyPreferDualStack
	if *svc.Spec.IPFamilyPolicy != prefer || (old.Spec.IPFamilyPolicy != nil && *old.Spec.IPFamilyPolicy != prefer) {
		return false
	}
	return slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies)
}

// reduced is an update that drops the second of two values.
func reduced[T comparable](now, before []T) bool {
	return len(before) == 2 && len(now) == 1 && now[0] == before[0]
}

// clusterFamily is the family of the service range; IPv4 without one.
func (s Strategy) clusterFamily() corev1.IPFamily {
	if s.IPs == nil {
		return corev1.IPv4Protocol
	}
	return familyOf(s.IPs.Range().IP.String())
}

func familyOf(ip string) corev1.IPFamily {
	if parsed := net.ParseIP(ip); parsed != nil && parsed.To4() == nil {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

func otherFamily(f corev1.IPFamily) corev1.IPFamily {
	if f == corev1.IPv4Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}
