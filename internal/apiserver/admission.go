package apiserver

import (
	"fmt"

	"k8s.io/apiserver/pkg/admission/initializer"
	lifecycle "k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	psadmission "k8s.io/pod-security-admission/admission"

	"github.com/dnsplane/dnsplane/internal/admission"
	"github.com/dnsplane/dnsplane/internal/admission/certadmission"
	"github.com/dnsplane/dnsplane/internal/admission/escalation"
	"github.com/dnsplane/dnsplane/internal/admission/podsecurity"
	"github.com/dnsplane/dnsplane/internal/admission/priority"
)

// newAdmission builds the server's admission chain (internal/admission)
// over its informers and authorizer. What each plugin reads, and from
// where, is docs/apiserver.md's "Reads on the write path".
func newAdmission(s *Server, cfg Config) (*admission.Chain, error) {
	var lc *lifecycle.Lifecycle
	var prio *priority.Plugin
	// Pod Security reads the namespace of every pod and pod template
	// write, and lists a namespace's pods when its level becomes stricter:
	// from the informers, as kube-apiserver's plugin does, with its live
	// lookup on a miss; from storage without them.
	var nsGetter podsecurity.NamespaceGetter = s
	var pods podsecurity.PodLister = s
	if cfg.Informers != nil {
		if cfg.Loopback == nil {
			return nil, fmt.Errorf("apiserver: informers without their loopback client")
		}
		var err error
		if lc, err = admission.NewNamespaceLifecycle(cfg.Loopback, cfg.Informers); err != nil {
			return nil, err
		}
		if prio, err = newPriority(cfg); err != nil {
			return nil, err
		}
		core := cfg.Informers.Core().V1()
		nsGetter = psadmission.NamespaceGetterFromListerAndClient(core.Namespaces().Lister(), cfg.Loopback)
		pods = psadmission.PodListerFromInformer(core.Pods().Lister())
	}
	ps, err := podsecurity.New(nsGetter, pods)
	if err != nil {
		return nil, err
	}
	return admission.New(admission.Config{
		NamespaceLifecycle: lc,
		NodeRestriction:    s.nodeRestriction,
		PodSecurity:        ps,
		Priority:           prio,
		View:               admission.Views(s.reg.strategies()),
		// kube's own gates: ClusterTrustBundleAttest reads
		// ClusterTrustBundle, which dnsplane's --feature-gates does not
		// carry.
		Certificates: certadmission.New(cfg.Authorizer, utilfeature.DefaultFeatureGate),
		RBAC:         &escalation.Checker{Authorizer: cfg.Authorizer, Rules: cfg.RBACRules},
	}), nil
}

// newPriority is kube's Priority admission, upstream's plugin
// (internal/admission/priority), initialised as kube-apiserver initialises
// its plugins: the informers (the caller registers them before it starts
// them once the server serves) and the loopback client upstream's
// ValidateInitialization asks for. It reads the PriorityClass informer
// only, never etcd.
func newPriority(cfg Config) (*priority.Plugin, error) {
	p := priority.New()
	initializer.New(cfg.Loopback, nil, cfg.Informers, nil, nil, nil, nil, nil).Initialize(p)
	if err := p.ValidateInitialization(); err != nil {
		return nil, fmt.Errorf("apiserver: %s admission: %w", priority.PluginName, err)
	}
	return p, nil
}
