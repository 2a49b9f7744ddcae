// Package clusterdnspolicy is the RBAC of the cluster DNS of `dnsplane up`:
// what its CoreDNS reads from the API and nothing more, reconciled by the
// API server at every start next to upstream's bootstrap policy and the DNS
// operator's (internal/operator/operatorpolicy; docs/dns-operator.md#identity).
// A package of its own, linking no CoreDNS, so that the control plane can
// import it.
package clusterdnspolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1helpers "k8s.io/kubernetes/pkg/apis/rbac/v1"

	"github.com/dnsplane/dnsplane/internal/authz"
)

// RoleName names the cluster DNS's ClusterRole, its Role in Namespace and
// their bindings, in the system: prefix of upstream's bootstrap roles.
// Not kubeadm's "system:coredns": a cluster may carry that role for a
// CoreDNS Deployment of its own, whose manifest would overwrite ours.
const RoleName = "system:dnsplane:cluster-dns"

// User is the cluster DNS's identity when `up` runs it: the CN of its
// client certificate in <data-dir>/pki/cluster-dns.kubeconfig, as the
// other roles of `up` have theirs (a certificate of the cluster CA rather
// than a service account token: the in-process cluster DNS is no pod, and
// nothing would rotate a bound token under it).
const User = "system:dnsplane:cluster-dns"

// Namespace and ConfigMap are where the DNS operator publishes the
// Corefile (internal/operator.Namespace and .Name; a test there keeps them
// equal).
const (
	Namespace = "dnsplane-system"
	ConfigMap = "dns-default"
)

// RBAC is what the cluster DNS reads, and nothing more:
//
//   - cluster-wide, the informers of CoreDNS's kubernetes plugin as the
//     operator renders it (`pods insecure`, no multicluster zones): list
//     and watch of Services, Namespaces and discovery.k8s.io
//     EndpointSlices (coredns plugin/kubernetes/controller.go). kubeadm's
//     system:coredns also grants v1 Endpoints, which CoreDNS reads no
//     more since 1.9, and pods, which only `pods verified` (and so the
//     autopath plugin) watches; searchexpand reads nothing from the API.
//   - in Namespace, the one ConfigMap the in-process runtime serves
//     (internal/coredns.RunFromConfigMapWithOptions: list and watch with
//     fieldSelector metadata.name, which RBAC matches against
//     resourceNames as kube-apiserver does). A DaemonSet's pod gets it
//     through its volume instead.
func RBAC() (rbacv1.ClusterRole, rbacv1.ClusterRoleBinding, rbacv1.Role, rbacv1.RoleBinding) {
	return authz.UserRoles{
		Name: RoleName, User: User, Namespace: Namespace,
		ClusterRules: []rbacv1.PolicyRule{
			rbacv1helpers.NewRule("list", "watch").Groups("").Resources("services", "namespaces").RuleOrDie(),
			rbacv1helpers.NewRule("list", "watch").Groups("discovery.k8s.io").Resources("endpointslices").RuleOrDie(),
		},
		NamespaceRules: []rbacv1.PolicyRule{
			rbacv1helpers.NewRule("list", "watch").Groups("").Resources("configmaps").Names(ConfigMap).RuleOrDie(),
		},
	}.Objects()
}
