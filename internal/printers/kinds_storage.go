package printers

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Printers of storage.k8s.io/v1, with the columns and cells of
// kube-apiserver's (k8s.io/kubernetes pkg/printers/internalversion).

func storageKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "storage.k8s.io", Kind: kind}
}

// storageClassPrinter prints a StorageClass. kube-apiserver marks the
// effective default class "(default)" in a list only, comparing the
// classes of the list; dnsplane prints each row on its own and does not.
func storageClassPrinter() Printer {
	doc := storagev1.StorageClass{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Provisioner", "string", doc["provisioner"]),
			colPlain("ReclaimPolicy", "string", doc["reclaimPolicy"]),
			colPlain("VolumeBindingMode", "string", doc["volumeBindingMode"]),
			colPlain("AllowVolumeExpansion", "string", doc["allowVolumeExpansion"]),
			colAge(),
		},
		func(o *storagev1.StorageClass, now time.Time) []any {
			reclaim := string(corev1.PersistentVolumeReclaimDelete)
			if o.ReclaimPolicy != nil {
				reclaim = string(*o.ReclaimPolicy)
			}
			binding := string(storagev1.VolumeBindingImmediate)
			if o.VolumeBindingMode != nil {
				binding = string(*o.VolumeBindingMode)
			}
			return []any{o.Name, o.Provisioner, reclaim, binding, derefOr(o.AllowVolumeExpansion, false), cellAge(o.CreationTimestamp, now)}
		},
	)
}

func volumeAttributesClassPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{colName(), colPlain("DriverName", "string", storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]), colAge()},
		func(o *storagev1.VolumeAttributesClass, now time.Time) []any {
			return []any{o.Name, o.DriverName, cellAge(o.CreationTimestamp, now)}
		},
	)
}

func volumeAttachmentPrinter() Printer {
	spec := storagev1.VolumeAttachmentSpec{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			// Upstream gives this column the name format too.
			{Name: "Attacher", Type: "string", Format: "name", Description: spec["attacher"]},
			colPlain("PV", "string", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]),
			colPlain("Node", "string", spec["nodeName"]),
			colPlain("Attached", "boolean", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]),
			colAge(),
		},
		func(o *storagev1.VolumeAttachment, now time.Time) []any {
			return []any{o.Name, o.Spec.Attacher, derefOr(o.Spec.Source.PersistentVolumeName, ""), o.Spec.NodeName, o.Status.Attached,
				cellAge(o.CreationTimestamp, now)}
		},
	)
}

func csiNodePrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
			colAge(),
		},
		func(o *storagev1.CSINode, now time.Time) []any {
			return []any{o.Name, int64(len(o.Spec.Drivers)), cellAge(o.CreationTimestamp, now)}
		},
	)
}

func csiDriverPrinter() Printer {
	spec := storagev1.CSIDriverSpec{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("AttachRequired", "boolean", spec["attachRequired"]),
			colPlain("PodInfoOnMount", "boolean", spec["podInfoOnMount"]),
			colPlain("StorageCapacity", "boolean", spec["storageCapacity"]),
			colPlain("TokenRequests", "string", spec["tokenRequests"]),
			colPlain("RequiresRepublish", "boolean", spec["requiresRepublish"]),
			colPlain("Modes", "string", spec["volumeLifecycleModes"]),
			colAge(),
		},
		func(o *storagev1.CSIDriver, now time.Time) []any {
			s := &o.Spec
			tokens := "<unset>"
			if s.TokenRequests != nil {
				audiences := make([]string, len(s.TokenRequests))
				for i, t := range s.TokenRequests {
					audiences[i] = t.Audience
				}
				tokens = strings.Join(audiences, ",")
			}
			modes := make([]string, len(s.VolumeLifecycleModes))
			for i, m := range s.VolumeLifecycleModes {
				modes[i] = string(m)
			}
			// An unset attachRequired means true (the API default).
			return []any{o.Name, derefOr(s.AttachRequired, true), derefOr(s.PodInfoOnMount, false), derefOr(s.StorageCapacity, false),
				tokens, derefOr(s.RequiresRepublish, false), cellOrNone(strings.Join(modes, ",")), cellAge(o.CreationTimestamp, now)}
		},
	)
}

// csiStorageCapacityPrinter prints a CSIStorageCapacity; upstream's has no
// AGE column.
func csiStorageCapacityPrinter() Printer {
	doc := storagev1.CSIStorageCapacity{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("StorageClassName", "string", doc["storageClassName"]),
			colPlain("Capacity", "string", doc["capacity"]),
		},
		func(o *storagev1.CSIStorageCapacity, _ time.Time) []any {
			capacity := "<unset>"
			if o.Capacity != nil {
				capacity = o.Capacity.String()
			}
			return []any{o.Name, o.StorageClassName, capacity}
		},
	)
}

// derefOr is *p, or def when p is nil.
func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
