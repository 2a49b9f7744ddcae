package controlplane_test

import (
	"context"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/dnsplane/dnsplane/internal/controlplane"
	"github.com/dnsplane/dnsplane/internal/controlplane/controlplanetest"
)

// TestNodeRestriction: through the whole request path (authentication,
// Node,RBAC, the write path), a node may write its own Node, Lease and the
// status of pods bound to it, and gets kube's 403 for another node's, as
// with kube-apiserver's NodeRestriction.
func TestNodeRestriction(t *testing.T) {
	t.Parallel()
	ts := controlplanetest.StartTestServer(t, controlplane.Config{})
	ctx := t.Context()
	cfg := rest.CopyConfig(ts.ClientConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	node, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin := ts.Client
	for _, n := range []string{"node-b"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct{ name, node string }{{"on-a", "node-a"}, {"on-b", "node-b"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		if _, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name  string
		write func(context.Context) error
		want  string // "" allowed, else in the 403
	}{
		{"create its Node", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, metav1.CreateOptions{})
			return err
		}, ""},
		{"patch its Node's status", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}]}}`), metav1.PatchOptions{}, "status")
			return err
		}, ""},
		{"create another Node", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-c"}}, metav1.CreateOptions{})
			return err
		}, `node "node-a" is not allowed to modify node "node-c"`},
		{"patch another Node's status", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Patch(ctx, "node-b", types.MergePatchType, []byte(`{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}]}}`), metav1.PatchOptions{}, "status")
			return err
		}, `node "node-a" is not allowed to modify node "node-b"`},
		{"label itself a control plane node", func(ctx context.Context) error {
			_, err := node.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":""}}}`), metav1.PatchOptions{})
			return err
		}, "is not allowed to modify labels: node-role.kubernetes.io/control-plane"},
		{"create its Lease", func(ctx context.Context) error {
			_, err := node.CoordinationV1().Leases("kube-node-lease").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, metav1.CreateOptions{})
			return err
		}, ""},
		{"create another node's Lease", func(ctx context.Context) error {
			_, err := node.CoordinationV1().Leases("kube-node-lease").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}, metav1.CreateOptions{})
			return err
		}, "can only access node lease with the same name as the requesting node"},
		{"status of its pod", func(ctx context.Context) error {
			_, err := node.CoreV1().Pods("default").Patch(ctx, "on-a", types.MergePatchType, []byte(`{"status":{"message":"hi"}}`), metav1.PatchOptions{}, "status")
			return err
		}, ""},
		{"status of another node's pod", func(ctx context.Context) error {
			_, err := node.CoreV1().Pods("default").Patch(ctx, "on-b", types.MergePatchType, []byte(`{"status":{"message":"hi"}}`), metav1.PatchOptions{}, "status")
			return err
		}, `node "node-a" can only update pod status for pods with spec.nodeName set to itself`},
		{"delete another node's pod", func(ctx context.Context) error {
			return node.CoreV1().Pods("default").Delete(ctx, "on-b", metav1.DeleteOptions{})
		}, `node "node-a" can only delete pods with spec.nodeName set to itself`},
		{"create a pod in kube-system", func(ctx context.Context) error {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "kube-system"},
				Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
			_, err := node.CoreV1().Pods("kube-system").Create(ctx, pod, metav1.CreateOptions{})
			return err
		}, "can only create mirror pods"},
		{"delete its pod", func(ctx context.Context) error {
			return node.CoreV1().Pods("default").Delete(ctx, "on-a", metav1.DeleteOptions{})
		}, ""},
	} {
		// In order: the Node is created before its status is written.
		err := tc.write(ctx)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "":
		case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: got %v, want a 403 with %q", tc.name, err, tc.want)
		}
	}
}
