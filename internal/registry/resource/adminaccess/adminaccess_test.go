package adminaccess

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// namespaces is a NamespaceGetter over a map; a missing name is an error.
type namespaces map[string]map[string]string

func (n namespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	l, ok := n[name]
	if !ok {
		return nil, errors.New("not found")
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}, nil
}

var nss = namespaces{
	"admin": {"resource.kubernetes.io/admin-access": "true"},
	"plain": nil,
	"false": {"resource.kubernetes.io/admin-access": "false"},
}

func requests(admin *bool) []resourcev1.DeviceRequest {
	return []resourcev1.DeviceRequest{
		{Name: "a", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "c"}},
		{Name: "b", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "c", AdminAccess: admin}},
	}
}

func ptr[T any](v T) *T { return &v }

const forbidden = "spec.devices.requests[1].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace"

func TestRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ns string
		getter   NamespaceGetter
		admin    *bool
		want     string
	}{
		{"no admin access", "plain", nss, nil, ""},
		{"admin access false", "plain", nss, ptr(false), ""},
		{"labelled namespace", "admin", nss, ptr(true), ""},
		{"unlabelled namespace", "plain", nss, ptr(true), forbidden},
		{"label not true", "false", nss, ptr(true), forbidden},
		{"unreadable namespace", "gone", nss, ptr(true), "spec.devices.requests[1].adminAccess: Internal error: could not retrieve namespace to verify admin access: not found"},
		{"offline", "plain", nil, ptr(true), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := joined(Requests(context.Background(), tc.getter, tc.ns, requests(tc.admin))); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestAllocation(t *testing.T) {
	t.Parallel()
	status := func(admin ...bool) *resourcev1.ResourceClaimStatus {
		if admin == nil {
			return &resourcev1.ResourceClaimStatus{}
		}
		st := &resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}}
		for _, a := range admin {
			st.Allocation.Devices.Results = append(st.Allocation.Devices.Results, resourcev1.DeviceRequestAllocationResult{AdminAccess: ptr(a)})
		}
		return st
	}
	for _, tc := range []struct {
		name, ns string
		st, old  *resourcev1.ResourceClaimStatus
		want     string
	}{
		{"no allocation", "plain", status(), status(), ""},
		{"allocation without admin access", "plain", status(false), status(), ""},
		{"grants admin access", "plain", status(false, true), status(),
			"status.allocation.devices.results[1].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace"},
		{"granted in a labelled namespace", "admin", status(true), status(), ""},
		// The allocation is immutable; what was granted stays granted.
		{"already granted", "plain", status(true), status(true), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := joined(Allocation(context.Background(), nss, tc.ns, tc.st, tc.old)); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func joined(errs field.ErrorList) string {
	if len(errs) == 0 {
		return ""
	}
	return errs.ToAggregate().Error()
}
