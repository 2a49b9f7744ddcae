package noderestriction

import (
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

var (
	pods   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodes  = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	leases = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

func pod(name, node string, labels map[string]string, annotations map[string]string) *dpcorev1.Pod {
	p := &dpcorev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels, Annotations: annotations}}
	p.Spec.NodeName = node
	return p
}

func node(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

func lease(ns, name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// TestAdmit: each rule of upstream's NodeRestriction, for node-a, with
// upstream's message; users that are not nodes pass.
func TestAdmit(t *testing.T) {
	t.Parallel()
	nodeA := &user.DefaultInfo{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
	nameless := &user.DefaultInfo{Name: "system:node:", Groups: []string{"system:nodes"}}
	owned := node("node-a", nil)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "x", UID: "u"}}
	for _, tc := range []struct {
		name string
		in   Attributes
		want string // "" allowed, else a substring of the 403's message
	}{
		{"admin deletes any pod", Attributes{User: admin, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p", OldObject: pod("p", "node-b", nil, nil)}, ""},
		{"nameless node", Attributes{User: nameless, Operation: admission.Update, Resource: nodes, Name: "node-a", Object: node("node-a", nil), OldObject: node("node-a", nil)},
			`could not determine node from user "system:node:"`},

		{"create own Node", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"kubernetes.io/hostname": "node-a"})}, ""},
		{"create another Node", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-b", Object: node("node-b", nil)},
			`nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`},
		{"update another Node's status", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Subresource: "status", Name: "node-b", Object: node("node-b", nil), OldObject: node("node-b", nil)},
			`not allowed to modify node "node-b"`},
		{"delete another Node", Attributes{User: nodeA, Operation: admission.Delete, Resource: nodes, Name: "node-b", OldObject: node("node-b", nil)},
			`not allowed to modify node "node-b"`},
		{"update own Node's status", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Subresource: "status", Name: "node-a", Object: node("node-a", nil), OldObject: node("node-a", nil)}, ""},
		{"register with a node-role label", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"node-role.kubernetes.io/control-plane": ""})},
			`node "node-a" is not allowed to set the following labels: node-role.kubernetes.io/control-plane`},
		{"register with a node-restriction label", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"node-restriction.kubernetes.io/dedicated": "db"})},
			`node-restriction.kubernetes.io/dedicated`},
		{"register with its own label", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"example.com/rack": "1", "topology.kubernetes.io/zone": "z"})}, ""},
		{"add a kubernetes.io label on update", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"node-role.kubernetes.io/master": ""}), OldObject: node("node-a", nil)},
			`is not allowed to modify labels: node-role.kubernetes.io/master`},
		{"remove its taint", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Name: "node-a", Object: node("node-a", nil), OldObject: node("node-a", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule})},
			`node "node-a" is not allowed to modify taints`},
		{"change ownerReferences", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Name: "node-a", Object: owned, OldObject: node("node-a", nil)},
			`not allowed to modify ownerReferences`},
		{"set configSource", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Spec: corev1.NodeSpec{ConfigSource: &corev1.NodeConfigSource{}}}}, //nolint:staticcheck // SA1019: upstream still refuses it
			`non-nil configSource`},

		{"create own Lease", Attributes{User: nodeA, Operation: admission.Create, Resource: leases, Namespace: "kube-node-lease", Object: lease("kube-node-lease", "node-a")}, ""},
		{"update own Lease", Attributes{User: nodeA, Operation: admission.Update, Resource: leases, Namespace: "kube-node-lease", Name: "node-a", Object: lease("kube-node-lease", "node-a"), OldObject: lease("kube-node-lease", "node-a")}, ""},
		{"create another node's Lease", Attributes{User: nodeA, Operation: admission.Create, Resource: leases, Namespace: "kube-node-lease", Object: lease("kube-node-lease", "node-b")},
			"can only access node lease with the same name as the requesting node"},
		{"update another node's Lease", Attributes{User: nodeA, Operation: admission.Update, Resource: leases, Namespace: "kube-node-lease", Name: "node-b", Object: lease("kube-node-lease", "node-b"), OldObject: lease("kube-node-lease", "node-b")},
			"can only access node lease with the same name"},
		{"a Lease elsewhere", Attributes{User: nodeA, Operation: admission.Update, Resource: leases, Namespace: "kube-system", Name: "kube-scheduler", Object: lease("kube-system", "kube-scheduler"), OldObject: lease("kube-system", "kube-scheduler")},
			`can only access leases in the "kube-node-lease" system namespace`},

		{"status of its pod", Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "p", Object: pod("p", "node-a", nil, nil), OldObject: pod("p", "node-a", nil, nil)}, ""},
		{"status of another node's pod", Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "p", Object: pod("p", "node-a", nil, nil), OldObject: pod("p", "node-b", nil, nil)},
			`node "node-a" can only update pod status for pods with spec.nodeName set to itself`},
		{"labels through status", Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "p", Object: pod("p", "node-a", map[string]string{"a": "b"}, nil), OldObject: pod("p", "node-a", nil, nil)},
			"cannot update labels through pod status"},
		{"delete its pod", Attributes{User: nodeA, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p", OldObject: pod("p", "node-a", nil, nil)}, ""},
		{"delete another node's pod", Attributes{User: nodeA, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p", OldObject: pod("p", "node-b", nil, nil)},
			`pods "p" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself`},
		{"delete an unbound pod", Attributes{User: nodeA, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p", OldObject: pod("p", "", nil, nil)},
			"can only delete pods with spec.nodeName set to itself"},
		{"update a pod", Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Namespace: "default", Name: "p", Object: pod("p", "node-a", nil, nil), OldObject: pod("p", "node-a", nil, nil)},
			`unexpected operation "UPDATE", node "node-a" can only create and delete mirror pods`},
		{"create a pod", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "kube-system", Name: "p", Object: pod("p", "node-a", nil, nil)},
			`pod does not have "kubernetes.io/config.mirror" annotation, node "node-a" can only create mirror pods`},
		{"create a mirror pod for another node", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: pod("p", "node-b", nil, map[string]string{"kubernetes.io/config.mirror": "x"})},
			"can only create pods with spec.nodeName set to itself"},
		{"create a mirror pod", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: pod("p", "node-a", nil, map[string]string{"kubernetes.io/config.mirror": "x"})},
			"runs no static pods"},
		{"evict its pod", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Subresource: "eviction", Namespace: "default", Name: "p", OldObject: pod("p", "node-a", nil, nil)}, ""},
		{"evict another node's pod", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Subresource: "eviction", Namespace: "default", Name: "p", OldObject: pod("p", "node-b", nil, nil)},
			"can only evict pods with spec.nodeName set to itself"},
		{"another pod subresource", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Subresource: "binding", Namespace: "default", Name: "p"},
			`unexpected pod subresource "binding"`},

		{"a kind the rules leave alone", Attributes{User: nodeA, Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "events"}, Namespace: "default", Object: &corev1.Event{}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := New().Admit(tc.in)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("allowed, want a 403 with %q", tc.want)
			case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("got %v, want a 403 with %q", err, tc.want)
			}
		})
	}
}
