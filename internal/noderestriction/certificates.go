package noderestriction

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
	certapi "k8s.io/kubernetes/pkg/apis/certificates"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// admitCSR is upstream's: a CSR a node creates for the kubelet signers
// (serving, and kube-apiserver client) must name the node itself as its
// CN, so a node cannot get a certificate as another node. The signers
// check the rest (AllowInsecureKubeletCertificateSigningRequests, off
// by default since 1.31, turns the rule off).
func admitCSR(nodeName string, a admission.Attributes) error {
	if a.GetOperation() != admission.Create {
		return nil
	}
	csr, ok := a.GetObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
	}
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName && csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		return nil
	}
	req, err := certapi.ParseCSR(csr.Spec.Request)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("unable to parse csr: %w", err))
	}
	if req.Subject.CommonName != "system:node:"+nodeName {
		return admission.NewForbidden(a, fmt.Errorf("can only create a node CSR with CN=system:node:%s", nodeName))
	}
	return nil
}

// admitPodCertificateRequest is upstream's: a node asks for a pod
// certificate only for a pod that runs on it, with the pod's, the node's
// and the service account's UIDs, for a signer a projected volume of the
// pod names (or that it is granted the
// request-serviceaccounts-podcertificate-signer verb on). A stale UID is
// a plain error, not a 403, as upstream: informer lag there, a retry
// here may meet the new object.
func (p *Admission) admitPodCertificateRequest(ctx context.Context, nodeName string, a admission.Attributes) error {
	if !p.podCertificateRequests {
		return admission.NewForbidden(a, fmt.Errorf("PodCertificateRequest feature gate is disabled"))
	}
	if a.GetOperation() != admission.Create {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %v", a.GetOperation()))
	}
	if a.GetSubresource() != "" {
		return admission.NewForbidden(a, fmt.Errorf("unexpected subresource %v", a.GetSubresource()))
	}
	ns := a.GetNamespace()
	req, ok := a.GetObject().(*certificatesv1.PodCertificateRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
	}
	key := ns + "/" + req.Spec.PodName
	if string(req.Spec.NodeName) != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", req.Spec.NodeName, nodeName))
	}
	obj, err := p.objs.Get(ctx, nodes, "", nodeName)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", req.Spec.NodeName, err)
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", req.Spec.NodeName, err))
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", obj))
	}
	if node.UID != req.Spec.NodeUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", key, req.Spec.NodeUID, node.UID)
	}
	pod, err := p.pod(ctx, ns, req.Spec.PodName)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", key, err)
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", key, err))
	}
	if req.Spec.PodUID != pod.UID {
		return fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", key, req.Spec.PodUID, string(pod.UID))
	}
	if pod.Spec.NodeName != string(req.Spec.NodeName) {
		return admission.NewForbidden(a, fmt.Errorf("pod %q is not running on node %q named in the PodCertificateRequest", key, req.Spec.NodeName))
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return admission.NewForbidden(a, fmt.Errorf("pod %q is a mirror pod", key))
	}
	if req.Spec.ServiceAccountName != pod.Spec.ServiceAccountName {
		// The UIDs match, so this is no lag: refused outright.
		return admission.NewForbidden(a, fmt.Errorf("PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)", key, req.Spec.ServiceAccountName, pod.Spec.ServiceAccountName))
	}
	saKey := ns + "/" + req.Spec.ServiceAccountName
	obj, err = p.objs.Get(ctx, serviceAccounts, ns, req.Spec.ServiceAccountName)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", saKey, err)
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", saKey, err))
	}
	sa, ok := obj.(*corev1.ServiceAccount)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", obj))
	}
	if req.Spec.ServiceAccountUID != sa.UID {
		return fmt.Errorf("PodCertificateRequest for pod %q names service account UID %q, which differs from the running service account (%q)", key, req.Spec.ServiceAccountUID, sa.UID)
	}
	if err := p.validatePodCertificateSigner(ctx, pod, req, a); err != nil {
		return admission.NewForbidden(a, err)
	}
	return nil
}

// validatePodCertificateSigner: the pod names the signer in a
// podCertificate projected volume, or the node is granted the signer.
func (p *Admission) validatePodCertificateSigner(ctx context.Context, pod *dpcorev1.Pod, req *certificatesv1.PodCertificateRequest, a admission.Attributes) error {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.PodCertificate != nil && src.PodCertificate.SignerName == req.Spec.SignerName {
				return nil
			}
		}
	}
	// RBAC resource names hold no "/": the signer is named as
	// ClusterTrustBundle names encode it.
	allowed, err := p.authorize(ctx, a, "request-serviceaccounts-podcertificate-signer", strings.ReplaceAll(req.Spec.SignerName, "/", ":"), req.Spec.ServiceAccountName)
	if allowed {
		return nil
	}
	if err != nil {
		return fmt.Errorf("error authorizing %s to request podcertificaterequests for signer %q: %w", a.GetUserInfo().GetName(), req.Spec.SignerName, err)
	}
	return fmt.Errorf("pod %q does not mount a podCertificate projected volume for signer %q", a.GetNamespace()+"/"+req.Spec.PodName, req.Spec.SignerName)
}
