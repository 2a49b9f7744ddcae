// Package noderestriction is kube's NodeRestriction admission for the
// writes of node agents (system:node:<name> in system:nodes): the Node
// authorizer lets any node create, update and delete Nodes, pods, their
// status, Leases, CSINodes, ResourceSlices, CSRs, PodCertificateRequests,
// PVC status and service account tokens, and this narrows it to what is
// the node's own, with the rules and messages of upstream's plugin
// (k8s.io/kubernetes/plugin/pkg/admission/noderestriction, admission.go).
//
// Upstream's plugin itself is not hosted: it takes k8s.io/apiserver
// admission attributes carrying kube-apiserver's internal objects, and it
// needs informers' listers started in the API server. Our API server
// stores v1 objects (a Pod is dnsplane's, with dnsParams) and admits per
// kind with no user, so the generic write path calls Admit with the user
// and v1 objects instead, and the objects the rules look up are read from
// the API server's storage through Objects
// (docs/apiserver.md#noderestriction). Node identities are upstream's
// (nodeidentifier), and so are the label rules (kubelet's label set).
package noderestriction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	csitrans "k8s.io/csi-translation-lib"
	kubeletapis "k8s.io/kubelet/pkg/apis"
	"k8s.io/kubernetes/pkg/auth/nodeidentifier"
	"k8s.io/kubernetes/pkg/features"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

var (
	podResource                   = schema.GroupResource{Resource: "pods"}
	nodeResource                  = schema.GroupResource{Resource: "nodes"}
	pvcResource                   = schema.GroupResource{Resource: "persistentvolumeclaims"}
	serviceAccountResource        = schema.GroupResource{Resource: "serviceaccounts"}
	leaseResource                 = schema.GroupResource{Group: coordinationv1.GroupName, Resource: "leases"}
	csiNodeResource               = schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}
	resourceSliceResource         = schema.GroupResource{Group: resourcev1.GroupName, Resource: "resourceslices"}
	csrResource                   = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}
	podCertificateRequestResource = schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}

	// What the rules read, at the versions dnsplane serves.
	pods            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodes           = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	serviceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	pvcs            = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pvs             = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	csiDrivers      = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}
)

// Attributes are one write: who, what, and the objects as the API server
// has them (Object nil on delete, OldObject nil on create; on delete
// OldObject is the stored object). A subresource create (a TokenRequest,
// an Eviction) has the subresource's body as Object and the parent's name
// as Name.
type Attributes struct {
	User        user.Info
	Operation   admission.Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	Object      runtime.Object
	OldObject   runtime.Object
}

// Objects reads stored objects, as the API server's storage has them
// (*dpcorev1.Pod for pods, k8s.io/api types otherwise), with the API's
// errors (a 404 when absent). Upstream reads informers' listers instead.
type Objects interface {
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (any, error)
}

// Config is what the rules read besides the request.
type Config struct {
	// Objects are the pods, nodes, service accounts, PVCs, PVs and CSI
	// drivers the rules look up; required, as upstream's
	// ValidateInitialization requires its listers.
	Objects Objects
	// Authorizer decides the extra grants a node may hold for a token
	// audience no volume of the pod uses, or a pod certificate signer no
	// volume names (upstream's SetUnconditionalAuthorizer); nil allows
	// them, as the API server's nil authorizer allows everything.
	Authorizer authorizer.Authorizer
	// Gates are kube's feature gates; nil = k8s.io/apiserver's default
	// gate, as kube-apiserver's InspectFeatureGates reads.
	Gates featuregate.FeatureGate
}

// Admission decides node writes. The zero value is not usable; use New.
type Admission struct {
	ids   nodeidentifier.NodeIdentifier
	objs  Objects
	authz authorizer.Authorizer
	csi   csitrans.CSITranslator

	// Upstream's InspectFeatureGates, read once.
	expansionRecovery       bool
	insecureKubeletCSRs     bool
	serviceAccountAudiences bool
	podCertificateRequests  bool
	csiVolumeHealth         bool
}

// New returns the admission with upstream's node identifier
// (system:node:<name> in system:nodes).
func New(cfg Config) *Admission {
	gates := cfg.Gates
	if gates == nil {
		gates = utilfeature.DefaultFeatureGate
	}
	return &Admission{
		ids:   nodeidentifier.NewDefaultNodeIdentifier(),
		objs:  cfg.Objects,
		authz: cfg.Authorizer,
		csi:   csitrans.New(),

		expansionRecovery:       gates.Enabled(features.RecoverVolumeExpansionFailure),
		insecureKubeletCSRs:     gates.Enabled(features.AllowInsecureKubeletCertificateSigningRequests),
		serviceAccountAudiences: gates.Enabled(features.ServiceAccountNodeAudienceRestriction),
		podCertificateRequests:  gates.Enabled(features.PodCertificateRequest),
		csiVolumeHealth:         gates.Enabled(features.CSIVolumeHealth),
	}
}

// Admit returns nil for users that are not nodes and for what a node may
// do, and upstream's 403 (admission.NewForbidden) otherwise; a lookup's
// 404 and upstream's retryable errors (a UID that may be stale) are
// returned as they are.
func (p *Admission) Admit(ctx context.Context, in Attributes) error {
	nodeName, isNode := p.ids.NodeIdentity(in.User)
	if !isNode {
		return nil
	}
	a := admission.NewAttributesRecord(in.Object, in.OldObject, schema.GroupVersionKind{}, in.Namespace, in.Name,
		in.Resource, in.Subresource, in.Operation, nil, false, in.User)
	if nodeName == "" {
		return admission.NewForbidden(a, fmt.Errorf("could not determine node from user %q", in.User.GetName()))
	}
	switch in.Resource.GroupResource() {
	case podResource:
		switch in.Subresource {
		case "":
			return admitPod(nodeName, a)
		case "status":
			return admitPodStatus(nodeName, a)
		case "eviction":
			return p.admitPodEviction(ctx, nodeName, a)
		default:
			return admission.NewForbidden(a, fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", in.Subresource))
		}
	case nodeResource:
		return admitNode(nodeName, a)
	case pvcResource:
		if in.Subresource != "status" {
			return admission.NewForbidden(a, errors.New("may only update PVC status"))
		}
		return p.admitPVCStatus(nodeName, a)
	case serviceAccountResource:
		return p.admitServiceAccount(ctx, nodeName, a)
	case podCertificateRequestResource:
		return p.admitPodCertificateRequest(ctx, nodeName, a)
	case leaseResource:
		return admitLease(nodeName, a)
	case csiNodeResource:
		return p.admitCSINode(nodeName, a)
	case resourceSliceResource:
		return admitResourceSlice(nodeName, a)
	case csrResource:
		if p.insecureKubeletCSRs {
			return nil
		}
		return admitCSR(nodeName, a)
	}
	return nil
}

// pod reads a stored pod.
func (p *Admission) pod(ctx context.Context, namespace, name string) (*dpcorev1.Pod, error) {
	obj, err := p.objs.Get(ctx, pods, namespace, name)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*dpcorev1.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected type %T", obj)
	}
	return pod, nil
}

// errNoStaticPods: upstream lets a node create the mirror pod of a static
// pod (bound to itself, owned by its Node, referencing no API object);
// dnsplane's agents run no static pods, so no node creates any pod.
var errNoStaticPods = errors.New("dnsplane runs no static pods, so nodes create no mirror pods")

// admitPod is upstream's admitPod: create only mirror pods, delete only
// pods bound to the node, nothing else.
func admitPod(nodeName string, a admission.Attributes) error {
	switch a.GetOperation() {
	case admission.Create:
		pod, ok := a.GetObject().(*dpcorev1.Pod)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
		}
		if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
			return admission.NewForbidden(a, fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, nodeName))
		}
		if pod.Spec.NodeName != nodeName {
			return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", nodeName))
		}
		return admission.NewForbidden(a, errNoStaticPods)
	case admission.Delete:
		if boundTo(a.GetOldObject()) != nodeName {
			return admission.NewForbidden(a, fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", nodeName))
		}
		return nil
	default:
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.GetOperation(), nodeName))
	}
}

// admitPodStatus is upstream's: the status of pods bound to the node,
// without label changes.
func admitPodStatus(nodeName string, a admission.Attributes) error {
	if a.GetOperation() != admission.Update {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %q", a.GetOperation()))
	}
	old, ok := a.GetOldObject().(*dpcorev1.Pod)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetOldObject()))
	}
	if old.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", nodeName))
	}
	pod, ok := a.GetObject().(*dpcorev1.Pod)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
	}
	if !labels.Equals(old.Labels, pod.Labels) {
		return admission.NewForbidden(a, fmt.Errorf("node %q cannot update labels through pod status", nodeName))
	}
	// The claims' statuses are the scheduler's and the resource claim
	// controller's: a node that rewrote them would reach other claims
	// through the Node authorizer's graph. Semantic equality is
	// upstream's field-by-field comparison (nil and empty alike,
	// quantities by value).
	if !apiequality.Semantic.DeepEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) {
		// Upstream's message, "statues" included.
		return admission.NewForbidden(a, fmt.Errorf("node %q cannot update resource claim statues", nodeName))
	}
	if !apiequality.Semantic.DeepEqual(old.Status.ExtendedResourceClaimStatus, pod.Status.ExtendedResourceClaimStatus) {
		return admission.NewForbidden(a, fmt.Errorf("node %q cannot update extended resource claim status", nodeName))
	}
	if !apiequality.Semantic.DeepEqual(old.Status.NodeAllocatableResourceClaimStatuses, pod.Status.NodeAllocatableResourceClaimStatuses) {
		return admission.NewForbidden(a, fmt.Errorf("node %q cannot update node allocatable resource claim statuses", nodeName))
	}
	return nil
}

// admitPodEviction is upstream's: a node evicts only pods bound to
// itself. It runs on the create of pods/eviction, before the eviction
// deletes the pod (whose delete admitPod decides again).
func (p *Admission) admitPodEviction(ctx context.Context, nodeName string, a admission.Attributes) error {
	if a.GetOperation() != admission.Create {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %s", a.GetOperation()))
	}
	ev, ok := a.GetObject().(*policyv1.Eviction)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
	}
	// The URL's name wins over the body's, as upstream.
	name := a.GetName()
	if name == "" {
		if ev.Name == "" {
			return admission.NewForbidden(a, errors.New("could not determine pod from request data"))
		}
		name = ev.Name
	}
	pod, err := p.pod(ctx, a.GetNamespace(), name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if pod.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", nodeName))
	}
	return nil
}

func boundTo(obj runtime.Object) string {
	if pod, ok := obj.(*dpcorev1.Pod); ok && pod != nil {
		return pod.Spec.NodeName
	}
	return ""
}

// admitNode is upstream's admitNode: only its own Node; no configSource;
// on update no taint or ownerReference change; no label in the
// node-restriction.kubernetes.io/ prefix nor a kubernetes.io or k8s.io
// label kubelet does not set.
func admitNode(nodeName string, a admission.Attributes) error {
	if a.GetName() != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify node %q", nodeName, a.GetName()))
	}
	switch a.GetOperation() {
	case admission.Create:
		node, ok := a.GetObject().(*corev1.Node)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
		}
		//nolint:staticcheck // SA1019: upstream still refuses the removed field, so a node cannot steer its own config
		if node.Spec.ConfigSource != nil {
			// Upstream's message, "pods" included.
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to create pods with a non-nil configSource", nodeName))
		}
		if forbidden := forbiddenLabels(modifiedLabels(node.Labels, nil)); len(forbidden) > 0 {
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to set the following labels: %s", nodeName, strings.Join(forbidden, ", ")))
		}
	case admission.Update:
		node, ok := a.GetObject().(*corev1.Node)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
		}
		old, ok := a.GetOldObject().(*corev1.Node)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetOldObject()))
		}
		//nolint:staticcheck // SA1019: as on create
		if node.Spec.ConfigSource != nil && !apiequality.Semantic.DeepEqual(node.Spec.ConfigSource, old.Spec.ConfigSource) {
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to update configSource to a new non-nil configSource", nodeName))
		}
		if !apiequality.Semantic.DeepEqual(node.Spec.Taints, old.Spec.Taints) {
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify taints", nodeName))
		}
		if !apiequality.Semantic.DeepEqual(node.OwnerReferences, old.OwnerReferences) {
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify ownerReferences", nodeName))
		}
		if forbidden := forbiddenLabels(modifiedLabels(node.Labels, old.Labels)); len(forbidden) > 0 {
			return admission.NewForbidden(a, fmt.Errorf("is not allowed to modify labels: %s", strings.Join(forbidden, ", ")))
		}
	}
	return nil
}

// admitLease is upstream's: only the node's own Lease in kube-node-lease.
func admitLease(nodeName string, a admission.Attributes) error {
	if a.GetNamespace() != corev1.NamespaceNodeLease {
		return admission.NewForbidden(a, fmt.Errorf("can only access leases in the %q system namespace", corev1.NamespaceNodeLease))
	}
	name := a.GetName()
	if a.GetOperation() == admission.Create {
		lease, ok := a.GetObject().(*coordinationv1.Lease)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.GetObject()))
		}
		name = lease.Name
	}
	if name != nodeName {
		return admission.NewForbidden(a, errors.New("can only access node lease with the same name as the requesting node"))
	}
	return nil
}

// admitResourceSlice is upstream's: a node creates and deletes only the
// slices of its own spec.nodeName. Updates are left to the Node
// authorizer, which knows each stored slice's node from its graph but not
// the body of a create, nor each slice a deletecollection removes (each is
// admitted here as a delete).
func admitResourceSlice(nodeName string, a admission.Attributes) error {
	var obj runtime.Object
	var verb string
	switch a.GetOperation() {
	case admission.Create:
		obj, verb = a.GetObject(), "create"
	case admission.Delete:
		obj, verb = a.GetOldObject(), "delete"
	default:
		return nil
	}
	slice, ok := obj.(*resourcev1.ResourceSlice)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", obj))
	}
	if slice.Spec.NodeName == nil || *slice.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("can only %s ResourceSlice with the same NodeName as the requesting node", verb))
	}
	return nil
}

// modifiedLabels are the keys added, removed or changed between a and b.
func modifiedLabels(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			out[k] = true
		}
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || v != w {
			out[k] = true
		}
	}
	return out
}

// forbiddenLabels are upstream's getForbiddenLabels, sorted: the
// node-restriction.kubernetes.io/ prefix (a node must not steer
// workloads meant for nodes an admin chose to itself) and kubernetes.io
// and k8s.io labels other than kubelet's own.
func forbiddenLabels(modified map[string]bool) []string {
	var out []string
	for key := range modified {
		ns, _, ok := strings.Cut(key, "/")
		if !ok {
			continue
		}
		restricted := ns == corev1.LabelNamespaceNodeRestriction || strings.HasSuffix(ns, "."+corev1.LabelNamespaceNodeRestriction)
		kube := ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
		if restricted || (kube && !kubeletapis.IsKubeletLabel(key)) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}
