// Package adminaccess is kube-apiserver's rule for DRA admin access
// (KEP-5018): a ResourceClaim or ResourceClaimTemplate may ask for
// administrative access to devices, and a claim's allocation may grant it,
// only in a namespace labelled resource.kubernetes.io/admin-access: "true".
// kube-apiserver checks it in its strategies (AuthorizedForAdmin and
// AuthorizedForAdminStatus in k8s.io/kubernetes/pkg/registry/resource),
// which read the namespace; that package also links the generic apiserver's
// request filters, so the rule is stated here with upstream's label key and
// words.
package adminaccess

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/resource"
)

// NamespaceGetter reads a namespace, to see its labels.
type NamespaceGetter interface {
	GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
}

// Requests checks the device requests of a claim (or of a template's
// claim) in namespace. The path names spec.devices.requests[i].adminAccess
// for templates too, as upstream's does. A nil getter (offline validation)
// checks nothing.
func Requests(ctx context.Context, g NamespaceGetter, namespace string, requests []resourcev1.DeviceRequest) field.ErrorList {
	for i, r := range requests {
		// Only a request for exactly one kind of device may ask for it;
		// the spec is immutable, so the old object needs no look.
		if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
			return check(ctx, g, namespace, field.NewPath("spec", "devices", "requests").Index(i).Child("adminAccess"))
		}
	}
	return nil
}

// Allocation checks a claim's status: an allocation that grants admin
// access, which old's did not (the allocation is immutable once set).
func Allocation(ctx context.Context, g NamespaceGetter, namespace string, status, old *resourcev1.ResourceClaimStatus) field.ErrorList {
	if granted(old) >= 0 {
		return nil
	}
	if i := granted(status); i >= 0 {
		return check(ctx, g, namespace, field.NewPath("status", "allocation", "devices", "results").Index(i).Child("adminAccess"))
	}
	return nil
}

// granted is the index of the first allocation result with admin access,
// or -1.
func granted(st *resourcev1.ResourceClaimStatus) int {
	if st.Allocation == nil {
		return -1
	}
	for i, r := range st.Allocation.Devices.Results {
		if r.AdminAccess != nil && *r.AdminAccess {
			return i
		}
	}
	return -1
}

func check(ctx context.Context, g NamespaceGetter, namespace string, path *field.Path) field.ErrorList {
	if g == nil {
		return nil
	}
	ns, err := g.GetNamespace(ctx, namespace)
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("could not retrieve namespace to verify admin access: %w", err))}
	}
	if ns.Labels[resource.DRAAdminNamespaceLabelKey] != "true" {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("admin access to devices requires the `%s: true` label on the containing namespace", resource.DRAAdminNamespaceLabelKey))}
	}
	return nil
}
