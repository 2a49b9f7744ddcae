package printers

import (
	"testing"
	"time"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTableStorageVersionMigrationCells: STATUS is the last true of
// Running, Failed and Succeeded, as upstream's handler prints it.
func TestTableStorageVersionMigrationCells(t *testing.T) {
	t.Parallel()
	cond := func(typ string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s}
	}
	for _, tt := range []struct {
		group, plural string
		cases         []tblCase
	}{
		{"storagemigration.k8s.io", "storageversionmigrations", []tblCase{
			{"none true", &storagemigrationv1.StorageVersionMigration{ObjectMeta: tblMeta("m", time.Hour), Spec: storagemigrationv1.StorageVersionMigrationSpec{
				Resource: metav1.GroupResource{Group: "apps", Resource: "deployments"}},
				Status: storagemigrationv1.StorageVersionMigrationStatus{Conditions: []metav1.Condition{cond("Running", metav1.ConditionFalse)}}},
				[]any{"m", "deployments.apps", "Unknown"}},
			{"last true wins", &storagemigrationv1.StorageVersionMigration{ObjectMeta: tblMeta("m", time.Hour), Spec: storagemigrationv1.StorageVersionMigrationSpec{
				Resource: metav1.GroupResource{Resource: "secrets"}},
				Status: storagemigrationv1.StorageVersionMigrationStatus{Conditions: []metav1.Condition{cond("Running", metav1.ConditionTrue), cond("Other", metav1.ConditionTrue), cond("Succeeded", metav1.ConditionTrue)}}},
				[]any{"m", "secrets", "Succeeded"}},
		}},
	} {
		t.Run(tt.plural, func(t *testing.T) {
			t.Parallel()
			checkRows(t, tblResource(t, tt.group, tt.plural), tt.cases)
		})
	}
}
