package persistentvolumeclaim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestDataSourceNormalised: a claim that names its source in one of
// spec.dataSource and spec.dataSourceRef gets both, as kube-apiserver
// stores it (KEP-1495), and the status a client sent is dropped.
func TestDataSourceNormalised(t *testing.T) {
	t.Parallel()
	src := &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "origin"}
	pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{DataSource: src},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	New().PrepareForCreate(context.Background(), pvc)
	if ref := pvc.Spec.DataSourceRef; ref == nil || ref.Kind != src.Kind || ref.Name != src.Name {
		t.Errorf("dataSourceRef %+v, want %+v", ref, src)
	}
	if pvc.Status.Phase != corev1.ClaimPending {
		t.Errorf("phase %q, want the default Pending", pvc.Status.Phase)
	}
}
