package printers

import (
	"time"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// svmKind is storagemigration.k8s.io/v1 StorageVersionMigration, printed
// with kube-apiserver's columns and cells (k8s.io/kubernetes
// pkg/printers/internalversion).
var svmKind = schema.GroupKind{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}

// storageVersionMigrationPrinter: STATUS is the last of Running, Failed
// and Succeeded that is true, else Unknown; upstream's NAME column has no
// name format and there is no AGE.
func storageVersionMigrationPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colPlain("Name", "string", objectMetaDoc["name"]),
			colPlain("Resource", "string", "GroupResource to migrate"),
			colPlain("Status", "string", "Status of the migration"),
		},
		func(o *storagemigrationv1.StorageVersionMigration, _ time.Time) []any {
			status := "Unknown"
			for _, c := range o.Status.Conditions {
				if c.Status != metav1.ConditionTrue {
					continue
				}
				switch storagemigrationv1.MigrationConditionType(c.Type) {
				case storagemigrationv1.MigrationRunning, storagemigrationv1.MigrationFailed, storagemigrationv1.MigrationSucceeded:
					status = c.Type
				}
			}
			return []any{o.Name, o.Spec.Resource.String(), status}
		},
	)
}
