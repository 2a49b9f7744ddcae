package apiserver

import (
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/dnsplane/dnsplane/internal/admission/noderestriction"
)

// newNodeRestriction is kube's NodeRestriction admission, upstream's
// plugin, always on (kubeadm enables it; docs/apiserver.md#noderestriction):
// writes by node agents are confined to their own Node, Lease, pods and
// what hangs off them. It is initialised as kube-apiserver initialises its
// plugins: kube's feature gates, the informers the authorizers read
// (kube-apiserver's VersionedInformers, which the caller starts once the
// server serves) and the authorizer, asked about the grants a node may
// hold beyond its pods' volumes. Without those informers (Config.Informers
// nil) node writes are refused: docs/apiserver.md says so.
func newNodeRestriction(cfg Config) *noderestriction.Plugin {
	var az authorizer.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	if cfg.Authorizer != nil {
		// Without one, every user may do everything, these grants too.
		az = cfg.Authorizer
	}
	p := noderestriction.New()
	initializer.New(nil, nil, cfg.Informers, az, utilfeature.DefaultFeatureGate, nil, nil, nil).Initialize(p)
	return p
}
