package noderestriction

import (
	"context"
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/klog/v2"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// admitServiceAccount is upstream's rule for serviceaccounts/token: a
// node's token must be bound to a pod, named with its UID, that runs on
// the node. A token for any service account a pod on the node uses would
// otherwise outlive the pod and let the node act as it anywhere.
// (kube-apiserver then adds the Node binding itself: kubernetes#121723.)
func (p *Admission) admitServiceAccount(ctx context.Context, nodeName string, a admission.Attributes) error {
	if a.GetOperation() != admission.Create || a.GetSubresource() != "token" {
		return nil
	}
	tr, ok := a.GetObject().(*authenticationv1.TokenRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return admission.NewForbidden(a, errors.New("node requested token not bound to a pod"))
	}
	if ref.UID == "" {
		return admission.NewForbidden(a, errors.New("node requested token with a pod binding without a uid"))
	}
	pod, err := p.pod(ctx, a.GetNamespace(), ref.Name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if ref.UID != pod.UID {
		return admission.NewForbidden(a, fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	if pod.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, errors.New("node requested token bound to a pod scheduled on a different node"))
	}
	// That the pod runs as this service account is the token storage's
	// own check (serviceaccount.issue: "cannot bind token for
	// serviceaccount ... to pod running with different serviceaccount
	// name."), for every user, as upstream's TokenREST.
	if p.serviceAccountAudiences {
		if err := p.validateAudience(ctx, tr, pod, a); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// validateAudience is upstream's ServiceAccountNodeAudienceRestriction
// (beta, on by default since 1.33, KEP-4412): a node asks only for an
// audience one of the pod's volumes uses (a projected token, or a CSI
// driver's tokenRequests), or one it is granted the
// request-serviceaccounts-token-audience verb on.
func (p *Admission) validateAudience(ctx context.Context, tr *authenticationv1.TokenRequest, pod *dpcorev1.Pod, a admission.Attributes) error {
	var audience string
	switch len(tr.Spec.Audiences) {
	case 0:
	case 1:
		audience = tr.Spec.Audiences[0]
	default:
		return errors.New("node may only request 0 or 1 audiences")
	}
	found, err := p.podReferencesAudience(ctx, pod, audience)
	if err != nil {
		return fmt.Errorf("error validating audience %q: %w", audience, err)
	}
	if found {
		return nil
	}
	// The service account's name is the request's name: the verb is on it.
	allowed, err := p.authorize(ctx, a, "request-serviceaccounts-token-audience", audience, a.GetName())
	if allowed {
		return nil
	}
	if err != nil {
		return fmt.Errorf("error authorizing %s to request tokens for audience %q: %w", a.GetUserInfo().GetName(), audience, err)
	}
	return fmt.Errorf("%s is not authorized to request tokens for audience %q", a.GetUserInfo().GetName(), audience)
}

// authorize asks the authorizer about a verb on a pseudo-resource of the
// request's group and version, as upstream's buildAuthorizerAttributes. A
// decision to allow wins over an error: RBAC may fail on one binding and
// still allow on another (as the authorization filter does).
func (p *Admission) authorize(ctx context.Context, a admission.Attributes, verb, resource, name string) (bool, error) {
	if p.authz == nil {
		return true, nil
	}
	decision, _, err := p.authz.Authorize(ctx, authorizer.AttributesRecord{
		User: a.GetUserInfo(), Verb: verb, APIGroup: a.GetResource().Group, APIVersion: a.GetResource().Version,
		Resource: resource, Namespace: a.GetNamespace(), Name: name, ResourceRequest: true,
	})
	return decision == authorizer.DecisionAllow, err
}

// podReferencesAudience reports whether a volume of pod uses audience:
// a projected service account token with it, or a CSI driver (inline,
// through a PVC or an ephemeral volume's PVC, or an in-tree volume
// migrated to CSI) whose tokenRequests name it.
func (p *Admission) podReferencesAudience(ctx context.Context, pod *dpcorev1.Pod, audience string) (bool, error) {
	var errs []error
	v1pod := &corev1.Pod{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec.PodSpec}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.ServiceAccountToken != nil && src.ServiceAccountToken.Audience == audience {
					return true, nil
				}
			}
		}
		var driver string
		var err error
		switch {
		case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
			driver, err = p.csiDriverOfClaim(ctx, pod.Namespace, ephemeral.VolumeClaimName(v1pod, v))
		case v.PersistentVolumeClaim != nil:
			driver, err = p.csiDriverOfClaim(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		case v.CSI != nil:
			driver = v.CSI.Driver
		case p.csi.IsInlineMigratable(v):
			var pv *corev1.PersistentVolume
			pv, err = p.csi.TranslateInTreeInlineVolumeToCSI(klog.FromContext(ctx), v, pod.Namespace)
			if err == nil && pv != nil && pv.Spec.CSI != nil {
				driver = pv.Spec.CSI.Driver
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if driver == "" {
			continue
		}
		has, err := p.csiDriverHasAudience(ctx, driver, audience)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if has {
			return true, nil
		}
	}
	return false, utilerrors.NewAggregate(errs)
}

// csiDriverOfClaim follows PVC -> PV -> CSI driver; "" when the PV is
// neither CSI nor migrated to it.
func (p *Admission) csiDriverOfClaim(ctx context.Context, namespace, claim string) (string, error) {
	obj, err := p.objs.Get(ctx, pvcs, namespace, claim)
	if err != nil {
		return "", err
	}
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return "", fmt.Errorf("unexpected type %T", obj)
	}
	obj, err = p.objs.Get(ctx, pvs, "", pvc.Spec.VolumeName)
	if err != nil {
		return "", err
	}
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return "", fmt.Errorf("unexpected type %T", obj)
	}
	if pv.Spec.CSI != nil {
		return pv.Spec.CSI.Driver, nil
	}
	if p.csi.IsPVMigratable(pv) {
		translated, err := p.csi.TranslateInTreePVToCSI(klog.FromContext(ctx), pv)
		if err != nil {
			return "", err
		}
		if translated != nil && translated.Spec.CSI != nil {
			return translated.Spec.CSI.Driver, nil
		}
	}
	return "", nil
}

func (p *Admission) csiDriverHasAudience(ctx context.Context, name, audience string) (bool, error) {
	obj, err := p.objs.Get(ctx, csiDrivers, "", name)
	if err != nil {
		return false, err
	}
	driver, ok := obj.(*storagev1.CSIDriver)
	if !ok {
		return false, fmt.Errorf("unexpected type %T", obj)
	}
	for _, tr := range driver.Spec.TokenRequests {
		if tr.Audience == audience {
			return true, nil
		}
	}
	return false, nil
}
