package noderestriction

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apiserver/pkg/admission"
)

// admitPVCStatus is upstream's: a node (resizing a volume it mounts)
// updates a PVC's status.capacity and conditions, and, with
// RecoverVolumeExpansionFailure (GA and locked on since 1.34), its
// allocatedResources and allocatedResourceStatuses; nothing else, so it
// cannot relabel a claim or add finalizers or owners.
func (p *Admission) admitPVCStatus(nodeName string, a admission.Attributes) error {
	if a.GetOperation() != admission.Update {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %q", a.GetOperation()))
	}
	old, ok := a.GetOldObject().(*corev1.PersistentVolumeClaim)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetOldObject()))
	}
	pvc, ok := a.GetObject().(*corev1.PersistentVolumeClaim)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
	}
	old, pvc = old.DeepCopy(), pvc.DeepCopy()
	for _, c := range []*corev1.PersistentVolumeClaim{old, pvc} {
		// An empty resourceVersion is an unconditional update; managed
		// fields are left alone, as upstream (its TODO).
		c.ResourceVersion = ""
		c.ManagedFields = nil
		c.Status.Capacity = nil
		c.Status.Conditions = nil
		if p.expansionRecovery {
			c.Status.AllocatedResources = nil
			c.Status.AllocatedResourceStatuses = nil
		}
	}
	if !apiequality.Semantic.DeepEqual(old, pvc) {
		// Upstream's message, "status.quantity" included.
		return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to update fields other than status.quantity and status.conditions: %v", nodeName, diff.Diff(old, pvc)))
	}
	return nil
}

// admitCSINode is upstream's: a node writes only the CSINode of its own
// name; its status (storageHealth) only with CSIVolumeHealth (alpha, off
// by default), and then not the spec through it.
func (p *Admission) admitCSINode(nodeName string, a admission.Attributes) error {
	name := a.GetName()
	if a.GetOperation() == admission.Create {
		m, err := meta.Accessor(a.GetObject())
		if err != nil {
			return admission.NewForbidden(a, errors.New("unable to access the object name"))
		}
		name = m.GetName()
	}
	if name != nodeName {
		return admission.NewForbidden(a, errors.New("can only access CSINode with the same name as the requesting node"))
	}
	if a.GetSubresource() != "status" {
		return nil
	}
	if !p.csiVolumeHealth {
		return admission.NewForbidden(a, errors.New("CSIVolumeHealth feature gate is disabled"))
	}
	if a.GetOperation() != admission.Update {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %q", a.GetOperation()))
	}
	old, ok := a.GetOldObject().(*storagev1.CSINode)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetOldObject()))
	}
	n, ok := a.GetObject().(*storagev1.CSINode)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
	}
	if !apiequality.Semantic.DeepEqual(old.Spec, n.Spec) {
		return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify CSINode spec via status", nodeName))
	}
	return nil
}
