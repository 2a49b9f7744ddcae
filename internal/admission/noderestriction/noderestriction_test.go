package noderestriction

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/utils/ptr"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

var leases = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

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
	nameless := &user.DefaultInfo{Name: "system:node:", Groups: []string{"system:nodes"}}
	owned := node("node-a", nil)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "x", UID: "u"}}
	na := node("node-a", nil)
	na.UID = "uid-node-a"
	// Upstream decides a pod's delete on the pod its informer has, not on
	// the stored object the API server hands over (OldObject): the pods
	// are seeded under names of their own.
	objs := store{
		key(nodes, "", "node-a"):       na,
		key(pods, "default", "p-a"):    pod("p-a", "node-a", nil, nil),
		key(pods, "default", "p-b"):    pod("p-b", "node-b", nil, nil),
		key(pods, "default", "p-none"): pod("p-none", "", nil, nil),
	}
	mirror := func(owner types.UID, volumes ...corev1.Volume) *dpcorev1.Pod {
		p := pod("p", "node-a", nil, map[string]string{"kubernetes.io/config.mirror": "x"})
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: owner, Controller: ptr.To(true)}}
		p.Spec.Volumes = volumes
		return p
	}
	secret := corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}
	run(t, hosted(t, config{Objects: objs}), []admitCase{
		{"admin deletes any pod", Attributes{User: admin, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p", OldObject: pod("p", "node-b", nil, nil)}, "", 0},
		{"nameless node", Attributes{User: nameless, Operation: admission.Update, Resource: nodes, Name: "node-a", Object: node("node-a", nil), OldObject: node("node-a", nil)},
			`could not determine node from user "system:node:"`, 0},

		{"create own Node", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"kubernetes.io/hostname": "node-a"})}, "", 0},
		{"create another Node", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-b", Object: node("node-b", nil)},
			`nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"`, 0},
		{"update another Node's status", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Subresource: "status", Name: "node-b", Object: node("node-b", nil), OldObject: node("node-b", nil)},
			`not allowed to modify node "node-b"`, 0},
		{"delete another Node", Attributes{User: nodeA, Operation: admission.Delete, Resource: nodes, Name: "node-b", OldObject: node("node-b", nil)},
			`not allowed to modify node "node-b"`, 0},
		{"update own Node's status", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Subresource: "status", Name: "node-a", Object: node("node-a", nil), OldObject: node("node-a", nil)}, "", 0},
		{"register with a node-role label", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"node-role.kubernetes.io/control-plane": ""})},
			`node "node-a" is not allowed to set the following labels: node-role.kubernetes.io/control-plane`, 0},
		{"register with a node-restriction label", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"node-restriction.kubernetes.io/dedicated": "db"})},
			`node-restriction.kubernetes.io/dedicated`, 0},
		{"register with its own label", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"example.com/rack": "1", "topology.kubernetes.io/zone": "z"})}, "", 0},
		{"add a kubernetes.io label on update", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Name: "node-a", Object: node("node-a", map[string]string{"node-role.kubernetes.io/master": ""}), OldObject: node("node-a", nil)},
			`is not allowed to modify labels: node-role.kubernetes.io/master`, 0},
		{"remove its taint", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Name: "node-a", Object: node("node-a", nil), OldObject: node("node-a", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule})},
			`node "node-a" is not allowed to modify taints`, 0},
		{"change ownerReferences", Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Name: "node-a", Object: owned, OldObject: node("node-a", nil)},
			`not allowed to modify ownerReferences`, 0},
		{"set configSource", Attributes{User: nodeA, Operation: admission.Create, Resource: nodes, Name: "node-a", Object: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Spec: corev1.NodeSpec{ConfigSource: &corev1.NodeConfigSource{}}}}, //nolint:staticcheck // SA1019: upstream still refuses it
			`non-nil configSource`, 0},

		{"create own Lease", Attributes{User: nodeA, Operation: admission.Create, Resource: leases, Namespace: "kube-node-lease", Object: lease("kube-node-lease", "node-a")}, "", 0},
		{"update own Lease", Attributes{User: nodeA, Operation: admission.Update, Resource: leases, Namespace: "kube-node-lease", Name: "node-a", Object: lease("kube-node-lease", "node-a"), OldObject: lease("kube-node-lease", "node-a")}, "", 0},
		{"create another node's Lease", Attributes{User: nodeA, Operation: admission.Create, Resource: leases, Namespace: "kube-node-lease", Object: lease("kube-node-lease", "node-b")},
			"can only access node lease with the same name as the requesting node", 0},
		{"update another node's Lease", Attributes{User: nodeA, Operation: admission.Update, Resource: leases, Namespace: "kube-node-lease", Name: "node-b", Object: lease("kube-node-lease", "node-b"), OldObject: lease("kube-node-lease", "node-b")},
			"can only access node lease with the same name", 0},
		{"a Lease elsewhere", Attributes{User: nodeA, Operation: admission.Update, Resource: leases, Namespace: "kube-system", Name: "kube-scheduler", Object: lease("kube-system", "kube-scheduler"), OldObject: lease("kube-system", "kube-scheduler")},
			`can only access leases in the "kube-node-lease" system namespace`, 0},

		{"status of its pod", Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "p", Object: pod("p", "node-a", nil, nil), OldObject: pod("p", "node-a", nil, nil)}, "", 0},
		{"status of another node's pod", Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "p", Object: pod("p", "node-a", nil, nil), OldObject: pod("p", "node-b", nil, nil)},
			`node "node-a" can only update pod status for pods with spec.nodeName set to itself`, 0},
		{"labels through status", Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Subresource: "status", Namespace: "default", Name: "p", Object: pod("p", "node-a", map[string]string{"a": "b"}, nil), OldObject: pod("p", "node-a", nil, nil)},
			"cannot update labels through pod status", 0},
		{"delete its pod", Attributes{User: nodeA, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p-a", OldObject: pod("p-a", "node-a", nil, nil)}, "", 0},
		{"delete another node's pod", Attributes{User: nodeA, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p-b", OldObject: pod("p-b", "node-b", nil, nil)},
			`pods "p-b" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself`, 0},
		{"delete an unbound pod", Attributes{User: nodeA, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p-none", OldObject: pod("p-none", "", nil, nil)},
			"can only delete pods with spec.nodeName set to itself", 0},
		{"delete a pod its informer has not seen", Attributes{User: nodeA, Operation: admission.Delete, Resource: pods, Namespace: "default", Name: "p", OldObject: pod("p", "node-a", nil, nil)},
			`pod "p" not found`, 404},
		{"update a pod", Attributes{User: nodeA, Operation: admission.Update, Resource: pods, Namespace: "default", Name: "p", Object: pod("p", "node-a", nil, nil), OldObject: pod("p", "node-a", nil, nil)},
			`unexpected operation "UPDATE", node "node-a" can only create and delete mirror pods`, 0},
		{"create a pod", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "kube-system", Name: "p", Object: pod("p", "node-a", nil, nil)},
			`pod does not have "kubernetes.io/config.mirror" annotation, node "node-a" can only create mirror pods`, 0},
		{"create a mirror pod for another node", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: pod("p", "node-b", nil, map[string]string{"kubernetes.io/config.mirror": "x"})},
			"can only create pods with spec.nodeName set to itself", 0},
		// Upstream admits a node's mirror pods (our port refused them all).
		{"create a mirror pod without an owner", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: pod("p", "node-a", nil, map[string]string{"kubernetes.io/config.mirror": "x"})},
			`node "node-a" can only create pods with an owner reference set to itself`, 0},
		{"create a mirror pod owned by its Node", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: mirror("uid-node-a")}, "", 0},
		{"create a mirror pod owned by a stale Node", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: mirror("uid-old")},
			"node node-a UID mismatch: expected uid-old got uid-node-a", 0},
		{"create a mirror pod that mounts a secret", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Namespace: "default", Name: "p", Object: mirror("uid-node-a", secret)},
			`node "node-a" can not create pods that reference secrets`, 0},
		{"another pod subresource", Attributes{User: nodeA, Operation: admission.Create, Resource: pods, Subresource: "binding", Namespace: "default", Name: "p"},
			`unexpected pod subresource "binding"`, 0},

		{"a kind the rules leave alone", Attributes{User: nodeA, Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "events"}, Namespace: "default", Object: &corev1.Event{}}, "", 0},
	})
}

// TestAdmitBeforeSync: until the informers upstream reads have listed, a
// node's write to a kind the plugin restricts waits and is then refused
// with kube's 403, instead of being decided on empty listers (a 404 for a
// pod that exists); users that are not nodes and kinds the plugin leaves
// alone pass at once. Without informers at all (a server whose authorizer
// has none), such writes are refused and say why.
func TestAdmitBeforeSync(t *testing.T) {
	t.Parallel()
	objs := store{key(pods, "default", "mine"): podWith("mine", "node-a", "uid-mine", projectedToken(""))}
	token := tokenFor(podRef("mine", "uid-mine")).record()
	status := Attributes{User: nodeA, Operation: admission.Update, Resource: nodes, Subresource: "status", Name: "node-a", Object: node("node-a", nil), OldObject: node("node-a", nil)}.record()
	event := Attributes{User: nodeA, Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "events"}, Namespace: "default", Object: &corev1.Event{}}.record()
	byAdmin := tokenFor(podRef("mine", "uid-mine"))
	byAdmin.User = admin

	t.Run("no informers", func(t *testing.T) {
		t.Parallel()
		p := New()
		p.InspectFeatureGates(utilfeature.DefaultFeatureGate)
		p.SetExternalKubeInformerFactory(nil)
		p.SetUnconditionalAuthorizer(authorizerfactory.NewAlwaysAllowAuthorizer())
		err := p.Admit(t.Context(), status, nil)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not yet ready to handle request: NodeRestriction requires a pod getter") {
			t.Errorf("node status: got %v, want a 403 naming the missing getter", err)
		}
		for name, a := range map[string]admission.Attributes{"admin": byAdmin.record(), "event": event} {
			if err := p.Admit(t.Context(), a, nil); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})

	t.Run("not synced, then synced", func(t *testing.T) {
		t.Parallel()
		p, f := initialised(t, config{Objects: objs})
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		err := p.Admit(ctx, token, nil)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not yet ready to handle request") {
			t.Errorf("token before sync: got %v, want kube's 403 not yet ready", err)
		}
		for name, a := range map[string]admission.Attributes{"admin": byAdmin.record(), "event": event} {
			if err := p.Admit(ctx, a, nil); err != nil {
				t.Errorf("%s before sync: %v", name, err)
			}
		}
		stop := make(chan struct{})
		t.Cleanup(func() {
			close(stop)
			f.Shutdown()
		})
		// A write in flight as the informers start passes once they have listed.
		done := make(chan error, 1)
		go func() { done <- p.Admit(t.Context(), token, nil) }()
		f.Start(stop)
		if err := <-done; err != nil {
			t.Errorf("token once synced: %v", err)
		}
	})
}
