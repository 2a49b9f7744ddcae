package printers

import (
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Roles print as kube-apiserver's default table convertor prints them (the
// creation time in RFC 3339), bindings as internalversion's printers.
func TestTableRBAC(t *testing.T) {
	t.Parallel()
	checkRows(t, tblResource(t, "rbac.authorization.k8s.io", "roles"), []tblCase{
		{"role", &rbacv1.Role{ObjectMeta: tblMeta("reader", time.Hour)}, []any{"reader", "2025-03-01T11:00:00Z"}},
		{"no timestamp", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, []any{"new", "0001-01-01T00:00:00Z"}},
	})
	checkRows(t, tblResource(t, "rbac.authorization.k8s.io", "clusterroles"), []tblCase{
		{"clusterrole", &rbacv1.ClusterRole{ObjectMeta: tblMeta("admin", time.Minute)}, []any{"admin", "2025-03-01T11:59:00Z"}},
	})
	subjects := []rbacv1.Subject{
		{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.UserKind, Name: "bob"},
		{Kind: rbacv1.GroupKind, Name: "devs"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "builder"},
	}
	checkRows(t, tblResource(t, "rbac.authorization.k8s.io", "rolebindings"), []tblCase{
		{"subjects", &rbacv1.RoleBinding{ObjectMeta: tblMeta("read", time.Minute), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"}, Subjects: subjects},
			[]any{"read", "Role/reader", "60s", "alice, bob", "devs", "kube-system/builder"}},
		{"none", &rbacv1.RoleBinding{ObjectMeta: tblMeta("empty", time.Minute), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}},
			[]any{"empty", "ClusterRole/view", "60s", "", "", ""}},
	})
	checkRows(t, tblResource(t, "rbac.authorization.k8s.io", "clusterrolebindings"), []tblCase{
		{"subjects", &rbacv1.ClusterRoleBinding{ObjectMeta: tblMeta("admins", time.Minute), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin"}, Subjects: subjects[2:]},
			[]any{"admins", "ClusterRole/admin", "60s", "", "devs", "kube-system/builder"}},
	})
}
