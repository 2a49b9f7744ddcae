package printers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The core/v1 kinds the controllers' informers list (issue 19), with the
// columns and cells of kube-apiserver's printers (k8s.io/kubernetes
// pkg/printers/internalversion).

func persistentVolumePrinter() Printer {
	spec, status := corev1.PersistentVolumeSpec{}.SwaggerDoc(), corev1.PersistentVolumeStatus{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Capacity", "string", spec["capacity"]),
			colPlain("Access Modes", "string", spec["accessModes"]),
			colPlain("Reclaim Policy", "string", spec["persistentVolumeReclaimPolicy"]),
			colPlain("Status", "string", status["phase"]),
			colPlain("Claim", "string", spec["claimRef"]),
			colPlain("StorageClass", "string", "StorageClass of the pv"),
			colPlain("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
			colPlain("Reason", "string", status["reason"]),
			colAge(),
			colWide("VolumeMode", "string", spec["volumeMode"]),
		},
		func(o *corev1.PersistentVolume, now time.Time) []any {
			claim := ""
			if ref := o.Spec.ClaimRef; ref != nil {
				claim = ref.Namespace + "/" + ref.Name
			}
			size := o.Spec.Capacity[corev1.ResourceStorage]
			phase := string(o.Status.Phase)
			if o.DeletionTimestamp != nil {
				phase = "Terminating"
			}
			class, ok := o.Annotations[corev1.BetaStorageClassAnnotation]
			if !ok {
				class = o.Spec.StorageClassName
			}
			return []any{o.Name, size.String(), printAccessModes(o.Spec.AccessModes), string(o.Spec.PersistentVolumeReclaimPolicy),
				phase, claim, class, derefOr(o.Spec.VolumeAttributesClassName, "<unset>"), o.Status.Reason,
				cellAge(o.CreationTimestamp, now), printVolumeMode(o.Spec.VolumeMode)}
		},
	)
}

// persistentVolumeClaimPrinter prints a PersistentVolumeClaim; its
// capacity and access modes are the bound volume's, so they are empty until
// the claim has a volume.
func persistentVolumeClaimPrinter() Printer {
	spec, status := corev1.PersistentVolumeClaimSpec{}.SwaggerDoc(), corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Status", "string", status["phase"]),
			colPlain("Volume", "string", spec["volumeName"]),
			colPlain("Capacity", "string", status["capacity"]),
			colPlain("Access Modes", "string", status["accessModes"]),
			colPlain("StorageClass", "string", "StorageClass of the pvc"),
			colPlain("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
			colAge(),
			colWide("VolumeMode", "string", spec["volumeMode"]),
		},
		func(o *corev1.PersistentVolumeClaim, now time.Time) []any {
			phase := string(o.Status.Phase)
			if o.DeletionTimestamp != nil {
				phase = "Terminating"
			}
			capacity, modes := "", ""
			if o.Spec.VolumeName != "" {
				size := o.Status.Capacity[corev1.ResourceStorage]
				capacity, modes = size.String(), printAccessModes(o.Status.AccessModes)
			}
			class, ok := o.Annotations[corev1.BetaStorageClassAnnotation]
			if !ok {
				class = derefOr(o.Spec.StorageClassName, "")
			}
			return []any{o.Name, phase, o.Spec.VolumeName, capacity, modes, class,
				derefOr(o.Spec.VolumeAttributesClassName, "<unset>"), cellAge(o.CreationTimestamp, now), printVolumeMode(o.Spec.VolumeMode)}
		},
	)
}

// printAccessModes abbreviates access modes in a fixed order, each once.
func printAccessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		if slices.Contains(modes, m.mode) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

func printVolumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

// resourceQuotaPrinter prints a ResourceQuota: used/hard per resource,
// sorted by name, the limits.* ones in LIMIT and the others in REQUEST.
func resourceQuotaPrinter() Printer {
	return newPrinter(
		[]metav1.TableColumnDefinition{
			colName(),
			colPlain("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
			colPlain("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
			colAge(),
		},
		func(o *corev1.ResourceQuota, now time.Time) []any {
			names := make([]corev1.ResourceName, 0, len(o.Status.Hard))
			for n := range o.Status.Hard {
				names = append(names, n)
			}
			slices.Sort(names)
			var requests, limits []string
			for _, n := range names {
				used, hard := o.Status.Used[n], o.Status.Hard[n]
				s := fmt.Sprintf("%s: %s/%s", n, used.String(), hard.String())
				if prefix, _, ok := strings.Cut(string(n), "."); ok && prefix == "limits" {
					limits = append(limits, s)
				} else {
					requests = append(requests, s)
				}
			}
			return []any{o.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), cellAge(o.CreationTimestamp, now)}
		},
	)
}

// limitRangePrinter: kube-apiserver has no handler for LimitRanges and
// prints them with its default table convertor.
func limitRangePrinter() Printer {
	return createdAtPrinter(schema.GroupResource{Resource: "limitranges"})
}
