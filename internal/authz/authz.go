// Package authz decides what an authenticated user may do, with
// kube-apiserver's own authorizers as libraries: the Node authorizer
// (k8s.io/kubernetes/plugin/pkg/auth/authorizer/node) over a graph of nodes,
// pods, volumes and claims, the RBAC authorizer
// (plugin/pkg/auth/authorizer/rbac) over the stored rbac.authorization.k8s.io
// objects, AlwaysAllow and AlwaysDeny, in the order --authorization-mode
// names them, behind system:masters, exactly as
// k8s.io/kubernetes/pkg/kubeapiserver/authorizer builds its union. That
// package itself is not linked: it brings the webhook and CEL authorizers,
// the ABAC policy file and a reloading loop dnsplane has no flags for.
//
// The authorizers read shared informers of the API server's own loopback
// client; until they have synced, RBAC and Node have no opinion, so only
// system:masters (the admin and every dnsplane role today) gets through.
package authz

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/auth/nodeidentifier"
	"k8s.io/kubernetes/pkg/kubeapiserver/authorizer/modes"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/node"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// The modes dnsplane supports, kube-apiserver's names. ABAC and Webhook
// are kube's too but need files and flags dnsplane does not have.
const (
	ModeAlwaysAllow = modes.ModeAlwaysAllow
	ModeAlwaysDeny  = modes.ModeAlwaysDeny
	ModeNode        = modes.ModeNode
	ModeRBAC        = modes.ModeRBAC
)

// DefaultModes is --authorization-mode's default, Node,RBAC: what kubeadm
// and managed clusters run (kube-apiserver's own default, AlwaysAllow, is
// only ever wanted on purpose).
func DefaultModes() []string { return []string{ModeNode, ModeRBAC} }

// ValidateModes checks an --authorization-mode list with kube-apiserver's
// messages (pkg/kubeapiserver/options/authorization.go).
func ValidateModes(list []string) error {
	if len(list) == 0 {
		return errors.New("at least one authorization-mode must be passed")
	}
	var errs []error
	for _, m := range list {
		switch m {
		case ModeAlwaysAllow, ModeAlwaysDeny, ModeNode, ModeRBAC:
		case modes.ModeABAC, modes.ModeWebhook:
			errs = append(errs, fmt.Errorf("authorization-mode %q is not supported by dnsplane: choose from %s", m, strings.Join(supported(), ",")))
		default:
			errs = append(errs, fmt.Errorf("authorization-mode %q is not a valid mode", m))
		}
	}
	seen := map[string]bool{}
	for _, m := range list {
		if seen[m] {
			errs = append(errs, fmt.Errorf("authorization-mode %q has mode specified more than once", list))
			break
		}
		seen[m] = true
	}
	return errors.Join(errs...)
}

func supported() []string {
	return []string{ModeAlwaysAllow, ModeAlwaysDeny, ModeNode, ModeRBAC}
}

// NeedsInformers says whether list has an authorizer that reads the API
// (Node, RBAC); AlwaysAllow and AlwaysDeny alone need no informers.
func NeedsInformers(list []string) bool {
	return slices.Contains(list, ModeNode) || slices.Contains(list, ModeRBAC)
}

// Authorizer is the union New builds, with what waits for its informers.
type Authorizer struct {
	authorizer.Authorizer
	// RuleResolver lists a user's rules (SelfSubjectRulesReview, kubectl
	// auth can-i --list), each mode's in the modes' order.
	RuleResolver authorizer.RuleResolver
	// EscalationRules resolves users' and roles' RBAC rules for the
	// escalation check on Role and binding writes (upstream's
	// DefaultRuleResolver over the same informers RBAC reads); nil when
	// the modes have no RBAC.
	EscalationRules rbacregistryvalidation.AuthorizationRuleResolver
	// Informers are the shared informers New was given, which the
	// authorizers read: kube-apiserver hands the same factory
	// (VersionedInformers) to the admission plugins that read the API,
	// NodeRestriction's listers among them (internal/admission/noderestriction).
	Informers informers.SharedInformerFactory
	synced    []cache.InformerSynced
}

// HasSynced reports whether every informer the authorizers read has
// listed once; before, RBAC and Node deny what they would allow.
func (a *Authorizer) HasSynced() bool {
	for _, s := range a.synced {
		if !s() {
			return false
		}
	}
	return true
}

// New builds the authorizers list names over f, which the caller starts
// (and shuts down) after New returned, once the API server serves. Call
// ValidateModes first; an unknown mode here is an error.
//
// The features the Node authorizer asks about are kube's global gate
// (utilfeature.DefaultFeatureGate), as in kube-apiserver.
func New(list []string, f informers.SharedInformerFactory) (*Authorizer, error) {
	if err := ValidateModes(list); err != nil {
		return nil, err
	}
	a := &Authorizer{Informers: f}
	// system:masters first, whatever the modes: kube-apiserver's
	// privileged group, never subject to RBAC (reload.go, newForConfig).
	named := []union.NamedAuthorizer{{
		AuthorizerName: "kubernetes.io/system-privileged-group",
		Authorizer:     authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup),
	}}
	var resolvers []authorizer.RuleResolver
	for _, m := range list {
		var az interface {
			authorizer.Authorizer
			authorizer.RuleResolver
		}
		switch m {
		case ModeAlwaysAllow:
			az = authorizerfactory.NewAlwaysAllowAuthorizer()
		case ModeAlwaysDeny:
			az = authorizerfactory.NewAlwaysDenyAuthorizer()
		case ModeNode:
			az = newNode(f)
			a.synced = append(a.synced,
				f.Core().V1().Nodes().Informer().HasSynced,
				f.Core().V1().Pods().Informer().HasSynced,
				f.Core().V1().PersistentVolumes().Informer().HasSynced,
				f.Storage().V1().VolumeAttachments().Informer().HasSynced,
				f.Resource().V1().ResourceSlices().Informer().HasSynced,
				f.Certificates().V1().PodCertificateRequests().Informer().HasSynced)
		case ModeRBAC:
			rb := f.Rbac().V1()
			roles, bindings := &rbac.RoleGetter{Lister: rb.Roles().Lister()}, &rbac.RoleBindingLister{Lister: rb.RoleBindings().Lister()}
			clusterRoles, clusterBindings := &rbac.ClusterRoleGetter{Lister: rb.ClusterRoles().Lister()}, &rbac.ClusterRoleBindingLister{Lister: rb.ClusterRoleBindings().Lister()}
			az = rbac.New(roles, bindings, clusterRoles, clusterBindings)
			// kube-apiserver's RBAC storage resolves from storage; the
			// informers RBAC decides on serve here, so a write is judged
			// on the rules its author's requests are.
			a.EscalationRules = rbacregistryvalidation.NewDefaultRuleResolver(roles, bindings, clusterRoles, clusterBindings)
			a.synced = append(a.synced, rb.Roles().Informer().HasSynced, rb.RoleBindings().Informer().HasSynced,
				rb.ClusterRoles().Informer().HasSynced, rb.ClusterRoleBindings().Informer().HasSynced)
		default:
			return nil, fmt.Errorf("unknown authorization mode %s specified", m)
		}
		// kube names each configured authorizer by its lower-cased mode.
		named = append(named, union.NamedAuthorizer{AuthorizerName: strings.ToLower(m), Authorizer: az})
		resolvers = append(resolvers, az)
	}
	u, err := union.New(named...)
	if err != nil {
		return nil, fmt.Errorf("authorizers: %w", err)
	}
	a.Authorizer, a.RuleResolver = u, union.NewRuleResolvers(resolvers...)
	return a, nil
}

// newNode is kube-apiserver's Node authorizer: a graph of what each node
// may reach (its pods, their secrets, config maps, claims, volumes),
// fed by informers, and bootstrappolicy.NodeRules for what a node may do
// at all. Every kind the graph follows is served by dnsplane, so the
// optional informers (ResourceSlices, PodCertificateRequests) are always
// given, as kube-apiserver gives them with their features on.
func newNode(f informers.SharedInformerFactory) *node.NodeAuthorizer {
	graph := node.NewGraph()
	node.AddGraphEventHandlers(graph,
		f.Core().V1().Nodes(),
		f.Core().V1().Pods(),
		f.Core().V1().PersistentVolumes(),
		f.Storage().V1().VolumeAttachments(),
		f.Resource().V1().ResourceSlices(),
		f.Certificates().V1().PodCertificateRequests(),
	)
	return node.NewAuthorizer(graph, nodeidentifier.NewDefaultNodeIdentifier(), bootstrappolicy.NodeRules())
}
