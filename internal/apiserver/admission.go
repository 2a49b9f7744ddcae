package apiserver

import (
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/dnsplane/dnsplane/internal/admission"
	"github.com/dnsplane/dnsplane/internal/admission/certadmission"
	"github.com/dnsplane/dnsplane/internal/admission/escalation"
	"github.com/dnsplane/dnsplane/internal/admission/podsecurity"
)

// newAdmission builds the server's admission chain (internal/admission)
// over its storage and authorizer.
func newAdmission(s *Server, cfg Config) (*admission.Chain, error) {
	ps, err := podsecurity.New(s, s)
	if err != nil {
		return nil, err
	}
	return admission.New(admission.Config{
		Namespaces:      s,
		NodeRestriction: s.nodeRestriction,
		PodSecurity:     ps,
		View:            admission.Views(s.reg.strategies()),
		// kube's own gates: ClusterTrustBundleAttest reads
		// ClusterTrustBundle, which dnsplane's --feature-gates does not
		// carry.
		Certificates: certadmission.New(cfg.Authorizer, utilfeature.DefaultFeatureGate),
		RBAC:         &escalation.Checker{Authorizer: cfg.Authorizer, Rules: cfg.RBACRules},
	}), nil
}
