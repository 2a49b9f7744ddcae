package printers

import (
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cells kube-apiserver's resource.k8s.io printers give
// (pkg/printers/internalversion: printResourceClaim, printDeviceTaint, …).
func TestTableResourceKinds(t *testing.T) {
	t.Parallel()
	checkRows(t, tblResource(t, "resource.k8s.io", "deviceclasses"), []tblCase{
		{"class", &resourcev1.DeviceClass{ObjectMeta: tblMeta("gpu", time.Minute)}, []any{"gpu", "60s"}},
	})
	checkRows(t, tblResource(t, "resource.k8s.io", "resourceclaimtemplates"), []tblCase{
		{"template", &resourcev1.ResourceClaimTemplate{ObjectMeta: tblMeta("one-gpu", time.Minute)}, []any{"one-gpu", "60s"}},
	})
	allocated := resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}}
	reserved := resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{},
		ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}}
	deleting := tblMeta("gone", time.Minute)
	deleting.DeletionTimestamp = tblAgoPtr(time.Second)
	checkRows(t, tblResource(t, "resource.k8s.io", "resourceclaims"), []tblCase{
		{"pending", &resourcev1.ResourceClaim{ObjectMeta: tblMeta("c", time.Minute)}, []any{"c", "pending", "60s"}},
		{"allocated", &resourcev1.ResourceClaim{ObjectMeta: tblMeta("c", time.Minute), Status: allocated}, []any{"c", "allocated", "60s"}},
		{"reserved", &resourcev1.ResourceClaim{ObjectMeta: tblMeta("c", time.Minute), Status: reserved}, []any{"c", "allocated,reserved", "60s"}},
		{"deleted", &resourcev1.ResourceClaim{ObjectMeta: deleting}, []any{"gone", "deleted", "60s"}},
		{"deleted allocated", &resourcev1.ResourceClaim{ObjectMeta: deleting, Status: allocated}, []any{"gone", "deleted,allocated", "60s"}},
	})
	checkRows(t, tblResource(t, "resource.k8s.io", "resourceslices"), []tblCase{
		{"node slice", &resourcev1.ResourceSlice{ObjectMeta: tblMeta("s", time.Minute), Spec: resourcev1.ResourceSliceSpec{
			NodeName: tblPtr("node-1"), Driver: "gpu.example.com", Pool: resourcev1.ResourcePool{Name: "pool-a"}}},
			[]any{"s", "node-1", "gpu.example.com", "pool-a", "60s"}},
		{"all nodes", &resourcev1.ResourceSlice{ObjectMeta: tblMeta("s", time.Minute), Spec: resourcev1.ResourceSliceSpec{
			AllNodes: tblPtr(true), Driver: "gpu.example.com", Pool: resourcev1.ResourcePool{Name: "pool-a"}}},
			[]any{"s", "", "gpu.example.com", "pool-a", "60s"}},
	})
	added := metav1.NewTime(tblNow.Add(-30 * time.Second))
	checkRows(t, tblResource(t, "resource.k8s.io", "devicetaintrules"), []tblCase{
		{"taint", &resourcev1.DeviceTaintRule{ObjectMeta: tblMeta("maint", time.Minute), Spec: resourcev1.DeviceTaintRuleSpec{
			Taint: resourcev1.DeviceTaint{Key: "example.com/maintenance", Value: "true", Effect: resourcev1.DeviceTaintEffectNoExecute, TimeAdded: &added}}},
			[]any{"maint", "example.com/maintenance", "true", "NoExecute", "30s", "60s"}},
		{"no time", &resourcev1.DeviceTaintRule{ObjectMeta: tblMeta("x", time.Minute), Spec: resourcev1.DeviceTaintRuleSpec{
			Taint: resourcev1.DeviceTaint{Key: "k", Effect: resourcev1.DeviceTaintEffectNoSchedule}}},
			[]any{"x", "k", "", "NoSchedule", "", "60s"}},
	})
}
