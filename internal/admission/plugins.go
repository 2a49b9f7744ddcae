package admission

import (
	kadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"

	"github.com/dnsplane/dnsplane/internal/admission/certadmission"
	"github.com/dnsplane/dnsplane/internal/admission/escalation"
	"github.com/dnsplane/dnsplane/internal/admission/noderestriction"
	"github.com/dnsplane/dnsplane/internal/admission/podsecurity"
	"github.com/dnsplane/dnsplane/internal/admission/priority"
)

// Config is what the plugins read.
type Config struct {
	// NamespaceLifecycle is upstream's plugin
	// (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle), built
	// and initialised by NewNamespaceLifecycle; nil runs none.
	NamespaceLifecycle *lifecycle.Lifecycle
	// NodeRestriction judges node agents' writes; nil runs none.
	NodeRestriction *noderestriction.Plugin
	// PodSecurity is Pod Security admission; nil runs none.
	PodSecurity *podsecurity.Admission
	// Priority resolves pods' PriorityClasses; nil runs none.
	Priority *priority.Plugin
	// View gives the k8s.io/api view of a served object (PodSecurity).
	View Viewer
	// Certificates are the certificate plugins.
	Certificates *certadmission.Admission
	// RBAC checks RBAC writes for privilege escalation.
	RBAC *escalation.Checker
}

// Plugins are the admission plugins the API server runs, in the order of
// kube-apiserver's AllOrderedPlugins
// (k8s.io/kubernetes/pkg/kubeapiserver/options/plugins.go), with the
// mutating ones and the validating ones each run in this order at their
// step of the store's write (docs/apiserver.md, "Admission", prints this
// list; TestDocsListThePlugins keeps it so). Adding a plugin is a file in
// this package and a line here.
func Plugins(cfg Config) []Plugin {
	return []Plugin{
		{"NamespaceLifecycle", orNil(cfg.NamespaceLifecycle)},
		{"ServiceAccount", newServiceAccount()},
		// On every write by a node agent: creates, updates and deletes of
		// the main resource and creates on subresources (tokens,
		// evictions, bindings); a write with no user passes.
		{"NodeRestriction", orNil(cfg.NodeRestriction)},
		{"PodSecurity", newPodSecurity(cfg.PodSecurity, cfg.View)},
		// Mutating on pod creates and updates, validating on
		// PriorityClass creates and updates; other writes pass at once.
		{"Priority", orNil(cfg.Priority)},
		{"DefaultTolerationSeconds", newDefaultTolerationSeconds()},
		// CertificateApproval, CertificateSigning, ClusterTrustBundleAttest
		// and CertificateSubjectRestriction, upstream's plugins, in that
		// order inside certadmission.
		{"Certificates", newCertificates(cfg.Certificates)},
		// Not an admission plugin in kube-apiserver but its RBAC storage's
		// check, which runs after mutating admission and before
		// validation, as this mutating step does.
		{"RBACEscalation", newRBACEscalation(cfg.RBAC)},
	}
}

// New returns the chain of Plugins(cfg).
func New(cfg Config) *Chain { return NewChain(Plugins(cfg)) }

var _ kadmission.Interface = Plugin{}

// orNil is p as an Interface, nil when p is a nil pointer, so that the
// chain leaves out a plugin its configuration did not build.
func orNil[P interface {
	*T
	kadmission.Interface
}, T any](p P) kadmission.Interface {
	if p == nil {
		return nil
	}
	return p
}
