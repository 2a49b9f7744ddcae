// Package noderestriction is kube's NodeRestriction admission for the
// writes of node agents (system:node:<name> in system:nodes): the Node
// authorizer lets any node create, update and delete Nodes, pods, their
// status and Leases, and this narrows it to the node's own, with the rules
// and messages of upstream's plugin
// (k8s.io/kubernetes/plugin/pkg/admission/noderestriction, admission.go).
//
// Upstream's plugin itself is not hosted: it takes k8s.io/apiserver
// admission attributes carrying kube-apiserver's internal objects, and it
// needs listers of pods, nodes, service accounts, PVCs, PVs and CSI drivers
// started in the API server. Our API server stores v1 objects (a Pod is
// dnsplane's, with dnsParams) and admits per kind with no user, so the
// generic write path calls Admit with the user and v1 objects instead
// (docs/apiserver.md#noderestriction). Node identities are upstream's
// (nodeidentifier), and so are the label rules (kubelet's label set).
package noderestriction

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	kubeletapis "k8s.io/kubelet/pkg/apis"
	"k8s.io/kubernetes/pkg/auth/nodeidentifier"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

var (
	podResource   = schema.GroupResource{Resource: "pods"}
	nodeResource  = schema.GroupResource{Resource: "nodes"}
	leaseResource = schema.GroupResource{Group: coordinationv1.GroupName, Resource: "leases"}
)

// Attributes are one write: who, what, and the objects as the API server
// has them (Object nil on delete, OldObject nil on create; on delete
// OldObject is the stored object).
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

// Admission decides node writes. The zero value is not usable; use New.
type Admission struct {
	ids nodeidentifier.NodeIdentifier
}

// New returns the admission with upstream's node identifier
// (system:node:<name> in system:nodes).
func New() *Admission { return &Admission{ids: nodeidentifier.NewDefaultNodeIdentifier()} }

// Admit returns nil for users that are not nodes and for what a node may
// do, and upstream's 403 (admission.NewForbidden) otherwise.
func (p *Admission) Admit(in Attributes) error {
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
			return admitPodEviction(nodeName, a)
		default:
			return admission.NewForbidden(a, fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", in.Subresource))
		}
	case nodeResource:
		return admitNode(nodeName, a)
	case leaseResource:
		return admitLease(nodeName, a)
	}
	return nil
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
	return nil
}

// admitPodEviction: a node evicts only pods bound to itself. The eviction
// subresource deletes the pod through the generic delete, so the pod is
// OldObject there.
func admitPodEviction(nodeName string, a admission.Attributes) error {
	if boundTo(a.GetOldObject()) != nodeName {
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
