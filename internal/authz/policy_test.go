package authz

import (
	"context"
	"log/slog"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestEnsurePolicy reconciles upstream's bootstrap policy as
// kube-apiserver's rbac/bootstrap-roles hook does: missing objects are
// created, an object that lost rules gets them back, and one annotated
// rbac.authorization.kubernetes.io/autoupdate=false keeps the user's
// change. Before, no policy existed at all.
func TestEnsurePolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	trimmed := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:basic-user",
		Annotations: map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}}}
	protected := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:discovery",
		Annotations: map[string]string{rbacv1.AutoUpdateAnnotationKey: "false"}}}
	client := fake.NewClientset(trimmed, protected)
	p := BootstrapPolicy()
	if err := EnsurePolicy(ctx, client, p, 10*time.Second, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	roles, err := client.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(roles.Items) != len(p.ClusterRoles) {
		t.Errorf("%d cluster roles, want the policy's %d", len(roles.Items), len(p.ClusterRoles))
	}
	bindings, err := client.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(bindings.Items) != len(p.ClusterRoleBindings) {
		t.Errorf("%d cluster role bindings, want the policy's %d", len(bindings.Items), len(p.ClusterRoleBindings))
	}
	for ns, want := range p.Roles {
		got, err := client.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Items) != len(want) {
			t.Errorf("%d roles in %s, want %d", len(got.Items), ns, len(want))
		}
	}
	basic, err := client.RbacV1().ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(basic.Rules) == 0 {
		t.Error("system:basic-user did not get its rules back")
	}
	discovery, err := client.RbacV1().ClusterRoles().Get(ctx, "system:discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(discovery.Rules) != 0 {
		t.Errorf("system:discovery, autoupdate=false, was changed: %v", discovery.Rules)
	}

	// A second start changes nothing.
	before := len(client.Actions())
	if err := EnsurePolicy(ctx, client, p, 10*time.Second, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions()[before:] {
		if v := a.GetVerb(); v != "get" && v != "list" {
			t.Errorf("second reconciliation: %s %s", v, a.GetResource().Resource)
		}
	}
}
