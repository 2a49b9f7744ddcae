package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The cells kube-apiserver's storage.k8s.io printers give
// (pkg/printers/internalversion: printStorageClass, printCSIDriver, …).

func TestTableStorageClasses(t *testing.T) {
	t.Parallel()
	retain, wait := corev1.PersistentVolumeReclaimRetain, storagev1.VolumeBindingWaitForFirstConsumer
	checkRows(t, tblResource(t, "storage.k8s.io", "storageclasses"), []tblCase{
		{"defaults", &storagev1.StorageClass{ObjectMeta: tblMeta("standard", time.Hour), Provisioner: "example.com/csi"},
			[]any{"standard", "example.com/csi", "Delete", "Immediate", false, "60m"}},
		{"set", &storagev1.StorageClass{ObjectMeta: tblMeta("fast", time.Minute), Provisioner: "example.com/csi",
			ReclaimPolicy: &retain, VolumeBindingMode: &wait, AllowVolumeExpansion: tblPtr(true)},
			[]any{"fast", "example.com/csi", "Retain", "WaitForFirstConsumer", true, "60s"}},
	})
}

func TestTableCSIKinds(t *testing.T) {
	t.Parallel()
	checkRows(t, tblResource(t, "storage.k8s.io", "csinodes"), []tblCase{
		{"two drivers", &storagev1.CSINode{ObjectMeta: tblMeta("node-1", time.Minute),
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "a"}, {Name: "b"}}}},
			[]any{"node-1", int64(2), "60s"}},
	})
	checkRows(t, tblResource(t, "storage.k8s.io", "csidrivers"), []tblCase{
		{"defaults", &storagev1.CSIDriver{ObjectMeta: tblMeta("csi.example.com", time.Minute)},
			[]any{"csi.example.com", true, false, false, "<unset>", false, "<none>", "60s"}},
		{"set", &storagev1.CSIDriver{ObjectMeta: tblMeta("csi.example.com", time.Minute), Spec: storagev1.CSIDriverSpec{
			AttachRequired: tblPtr(false), PodInfoOnMount: tblPtr(true), StorageCapacity: tblPtr(true), RequiresRepublish: tblPtr(true),
			TokenRequests:        []storagev1.TokenRequest{{Audience: "a"}, {Audience: "b"}},
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}},
			[]any{"csi.example.com", false, true, true, "a,b", true, "Persistent,Ephemeral", "60s"}},
	})
	q := resource.MustParse("10Gi")
	checkRows(t, tblResource(t, "storage.k8s.io", "csistoragecapacities"), []tblCase{
		{"capacity", &storagev1.CSIStorageCapacity{ObjectMeta: tblMeta("c1", time.Minute), StorageClassName: "fast", Capacity: &q},
			[]any{"c1", "fast", "10Gi"}},
		{"unset", &storagev1.CSIStorageCapacity{ObjectMeta: tblMeta("c2", time.Minute), StorageClassName: "fast"},
			[]any{"c2", "fast", "<unset>"}},
	})
}

func TestTableVolumeAttachmentsAndAttributesClasses(t *testing.T) {
	t.Parallel()
	checkRows(t, tblResource(t, "storage.k8s.io", "volumeattachments"), []tblCase{
		{"attached", &storagev1.VolumeAttachment{ObjectMeta: tblMeta("va", time.Minute),
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1",
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: tblPtr("pv-1")}},
			Status: storagev1.VolumeAttachmentStatus{Attached: true}},
			[]any{"va", "csi.example.com", "pv-1", "node-1", true, "60s"}},
		{"inline", &storagev1.VolumeAttachment{ObjectMeta: tblMeta("inline", time.Minute),
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "node-1"}},
			[]any{"inline", "csi.example.com", "", "node-1", false, "60s"}},
	})
	checkRows(t, tblResource(t, "storage.k8s.io", "volumeattributesclasses"), []tblCase{
		{"class", &storagev1.VolumeAttributesClass{ObjectMeta: tblMeta("gold", time.Minute), DriverName: "csi.example.com"},
			[]any{"gold", "csi.example.com", "60s"}},
	})
}
