package operator

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/dnsplane/dnsplane/api/operator/v1"
)

// The operator's RBAC on a cluster, least privilege: each rule is a call
// the operator makes (the informers list and watch; the reconciler
// creates and updates what it manages). TestOperatorRBACSuffices runs the
// operator as a service account bound to exactly these rules and fails on
// any 403. The chart binds them to its service account.
//
// Left out on purpose:
//   - creating the namespace dnsplane-system: the operator creates it
//     when it is missing (for `dnsplane up` and a bare `dnsplane
//     operator`), but in a cluster it runs in that namespace, so it
//     exists; cluster-wide namespace creation is not worth granting for
//     a case that cannot happen there.
//   - get on the objects it watches: it reads them from its informers.
//   - secrets, nodes, and pods beyond list and watch in its namespace:
//     the forward health is read from the pods' metrics port directly.

// ClusterRoleRules are the operator's cluster-scoped rules: the DNS
// resource (cluster-scoped) and its status, and reading its namespace.
func ClusterRoleRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		// The informer lists and watches DNS objects; the reconciler
		// creates "default" with the defaults when it is missing.
		{APIGroups: []string{operatorv1.GroupName}, Resources: []string{"dnses"}, Verbs: []string{"list", "watch", "create"}},
		{APIGroups: []string{operatorv1.GroupName}, Resources: []string{"dnses/status"}, Verbs: []string{"update"}},
		// ensureNamespace reads its namespace before creating the objects
		// in it.
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{Namespace}, Verbs: []string{"get"}},
	}
}

// RoleRules are the operator's rules in its namespace, Namespace: the
// objects it manages there (ConfigMap, Service, DaemonSet "dns-default",
// and the CA bundle ConfigMaps it copies) and the cluster DNS pods whose
// metrics it reads.
func RoleRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch", "create", "update"}},
		// A Service whose cluster IP is wrong is deleted and created
		// again: a Service's cluster IP cannot be updated.
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"list", "watch", "create", "update", "delete"}},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"list", "watch", "create", "update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}},
	}
}

// EventNamespace is where the events of the DNS object go: the namespace
// "default", as for every cluster-scoped object (client-go's recorder).
const EventNamespace = metav1.NamespaceDefault

// EventRoleRules are the operator's rules in EventNamespace: recording
// the DNS object's events (the broadcaster creates an event and patches
// its count on repeats).
func EventRoleRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
}
