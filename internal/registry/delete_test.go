package registry

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	genericrest "k8s.io/apiserver/pkg/registry/rest"

	"github.com/dnsplane/dnsplane/internal/registry/rest"
)

// TestDeleteBehaviourIsUpstreams keeps each kind's delete answer and
// default garbage collection policy those of its store in kube-apiserver
// 1.37: ReturnDeletedObject in pkg/registry/<group>/<kind>/storage/
// storage.go (DeviceTaintRule only before resource.k8s.io/v1; custom
// resources, dnsplane's DNS included, never), DefaultGarbageCollectionPolicy
// in the kinds' strategy.go at the versions dnsplane serves.
func TestDeleteBehaviourIsUpstreams(t *testing.T) {
	t.Parallel()
	returnsObject := map[schema.GroupKind]bool{}
	for _, gk := range []schema.GroupKind{
		{Kind: "Namespace"}, {Kind: "Pod"}, {Kind: "Service"}, {Kind: "PodTemplate"}, {Kind: "ServiceAccount"},
		{Kind: "ResourceQuota"}, {Kind: "PersistentVolume"}, {Kind: "PersistentVolumeClaim"},
		{Group: "storage.k8s.io", Kind: "StorageClass"}, {Group: "storage.k8s.io", Kind: "CSIDriver"},
		{Group: "storage.k8s.io", Kind: "CSINode"}, {Group: "storage.k8s.io", Kind: "VolumeAttachment"},
		{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"},
		{Group: "resource.k8s.io", Kind: "DeviceClass"}, {Group: "resource.k8s.io", Kind: "ResourceClaim"},
		{Group: "resource.k8s.io", Kind: "ResourceClaimTemplate"}, {Group: "resource.k8s.io", Kind: "ResourceSlice"},
	} {
		returnsObject[gk] = true
	}
	policy := map[schema.GroupKind]genericrest.GarbageCollectionPolicy{
		{Group: "apps", Kind: "Deployment"}:     genericrest.DeleteDependents,
		{Group: "apps", Kind: "ReplicaSet"}:     genericrest.DeleteDependents,
		{Group: "apps", Kind: "DaemonSet"}:      genericrest.DeleteDependents,
		{Group: "apps", Kind: "StatefulSet"}:    genericrest.DeleteDependents,
		{Group: "batch", Kind: "CronJob"}:       genericrest.DeleteDependents,
		{Group: "batch", Kind: "Job"}:           genericrest.OrphanDependents, // batch/v1, "for back compatibility"
		{Kind: "ReplicationController"}:         genericrest.OrphanDependents, // v1, likewise
		{Kind: "Event"}:                         genericrest.Unsupported,
		{Group: "events.k8s.io", Kind: "Event"}: genericrest.Unsupported,
	}
	for gk, s := range Strategies(Config{}) {
		if got := rest.ReturnsDeletedObject(s); got != returnsObject[gk] {
			t.Errorf("%s: returns the deleted object %v, upstream %v", gk, got, returnsObject[gk])
		}
		if got := rest.GarbageCollectionPolicy(context.Background(), s); got != policy[gk] {
			t.Errorf("%s: garbage collection policy %q, upstream %q", gk, got, policy[gk])
		}
	}
}
