package printers

import (
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/apis/rbac"
)

// Printers of rbac.authorization.k8s.io/v1. kube-apiserver prints Roles
// and ClusterRoles with its default table convertor
// (k8s.io/apiserver/pkg/registry/rest.NewDefaultTableConvertor: NAME and
// CREATED AT), the bindings with internalversion's printers.

func rbacKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: kind}
}

func rolePrinter() Printer {
	return createdAtPrinter(schema.GroupResource{Group: rbacv1.GroupName, Resource: "roles"})
}

func clusterRolePrinter() Printer {
	return createdAtPrinter(schema.GroupResource{Group: rbacv1.GroupName, Resource: "clusterroles"})
}

func roleBindingPrinter() Printer {
	return newPrinter(bindingColumns("roleBinding", rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"]),
		func(o *rbacv1.RoleBinding, now time.Time) []any {
			return bindingCells(o.Name, o.RoleRef, o.Subjects, o.CreationTimestamp, now)
		})
}

func clusterRoleBindingPrinter() Printer {
	return newPrinter(bindingColumns("clusterRoleBinding", rbacv1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]),
		func(o *rbacv1.ClusterRoleBinding, now time.Time) []any {
			return bindingCells(o.Name, o.RoleRef, o.Subjects, o.CreationTimestamp, now)
		})
}

func bindingColumns(kind, roleRefDoc string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		colName(),
		colPlain("Role", "string", roleRefDoc),
		colAge(),
		colWide("Users", "string", "Users in the "+kind),
		colWide("Groups", "string", "Groups in the "+kind),
		colWide("ServiceAccounts", "string", "ServiceAccounts in the "+kind),
	}
}

// bindingCells lists the subjects with upstream's rbac.SubjectsStrings.
func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, created metav1.Time, now time.Time) []any {
	in := make([]rbac.Subject, len(subjects))
	for i, s := range subjects {
		in[i] = rbac.Subject{Kind: s.Kind, APIGroup: s.APIGroup, Name: s.Name, Namespace: s.Namespace}
	}
	users, groups, sas, _ := rbac.SubjectsStrings(in)
	return []any{name, ref.Kind + "/" + ref.Name, cellAge(created, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}
