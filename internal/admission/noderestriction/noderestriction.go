// Package noderestriction hosts kube-apiserver's NodeRestriction admission
// plugin (k8s.io/kubernetes/plugin/pkg/admission/noderestriction) over the
// objects dnsplane's API server serves: the Node authorizer lets any node
// write Nodes, pods, their status, Leases, CSINodes, ResourceSlices, CSRs,
// PodCertificateRequests, PVC status and service account tokens, and the
// plugin narrows that to what is the node's own
// (docs/apiserver.md#noderestriction).
//
// The rules, messages and lookups are upstream's own code; what this
// package adds is what kube-apiserver's admission chain does around it:
// the objects are converted to kube's internal types (dnsplane serves v1
// objects, and its Pod carries dnsParams), and a node's write waits for
// the plugin's informers to have listed once, as kube's plugins with a
// ReadyFunc do (admission.Handler.WaitForReady).
package noderestriction

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/auth/nodeidentifier"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/plugin/pkg/admission/noderestriction"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/admission/host"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// PluginName is upstream's: the name kube-apiserver's
// --enable-admission-plugins and its admission metrics use.
const PluginName = noderestriction.PluginName

// restricted are the resources upstream's Admit decides on (its switch on
// GroupResource); for the others it returns before reading anything.
var restricted = map[schema.GroupResource]bool{
	{Resource: "pods"}:                                                     true,
	{Resource: "nodes"}:                                                    true,
	{Resource: "persistentvolumeclaims"}:                                   true,
	{Resource: "serviceaccounts"}:                                          true,
	{Group: "coordination.k8s.io", Resource: "leases"}:                     true,
	{Group: "storage.k8s.io", Resource: "csinodes"}:                        true,
	{Group: "resource.k8s.io", Resource: "resourceslices"}:                 true,
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: true,
	{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}:     true,
}

// Plugin is upstream's NodeRestriction with dnsplane's objects. It is
// initialised as kube-apiserver initialises upstream's (the initializer
// interfaces below, k8s.io/apiserver/pkg/admission/initializer): feature
// gates first, then the informers and the authorizer. Use New.
type Plugin struct {
	upstream *noderestriction.Plugin
	ids      nodeidentifier.NodeIdentifier
	// audiences is ServiceAccountNodeAudienceRestriction, with which
	// upstream also reads PVCs, PVs and CSI drivers.
	audiences bool
	// synced are the informers upstream's listers read; nil until
	// SetExternalKubeInformerFactory.
	synced []cache.InformerSynced
}

var (
	_ admission.MutationInterface                  = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsFeatures                    = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
	_ initializer.WantsUnconditionalAuthorizer     = (*Plugin)(nil)
)

// New returns the plugin with upstream's node identifier
// (system:node:<name> in system:nodes), not yet initialised: until it has
// its feature gates, informers and authorizer, it refuses every write by
// a node to the resources it restricts.
func New() *Plugin {
	ids := nodeidentifier.NewDefaultNodeIdentifier()
	return &Plugin{upstream: noderestriction.NewPlugin(ids), ids: ids}
}

// Handles is upstream's: create, update and delete (not connect).
func (p *Plugin) Handles(op admission.Operation) bool { return p.upstream.Handles(op) }

// InspectFeatureGates reads kube's gates into upstream's plugin; call it
// before SetExternalKubeInformerFactory, which registers informers by them.
func (p *Plugin) InspectFeatureGates(gates featuregate.FeatureGate) {
	p.upstream.InspectFeatureGates(gates)
	p.audiences = gates.Enabled(features.ServiceAccountNodeAudienceRestriction)
}

// SetExternalKubeInformerFactory gives upstream's plugin its listers from
// f, whose informers the caller starts (registering them after f.Start
// would leave them stopped). A nil f is ignored: the plugin stays
// uninitialised.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	if f == nil {
		return
	}
	p.upstream.SetExternalKubeInformerFactory(f)
	// The informers upstream just took listers of, by the same gate.
	core := f.Core().V1()
	p.synced = []cache.InformerSynced{core.Pods().Informer().HasSynced, core.Nodes().Informer().HasSynced, core.ServiceAccounts().Informer().HasSynced}
	if p.audiences {
		p.synced = append(p.synced, f.Storage().V1().CSIDrivers().Informer().HasSynced,
			core.PersistentVolumeClaims().Informer().HasSynced, core.PersistentVolumes().Informer().HasSynced)
	}
}

// SetUnconditionalAuthorizer is the authorizer asked about the audiences
// and pod certificate signers a node may request beyond its pods' volumes.
func (p *Plugin) SetUnconditionalAuthorizer(a authorizer.UnconditionalAuthorizer) {
	p.upstream.SetUnconditionalAuthorizer(a)
}

// ValidateInitialization is upstream's.
func (p *Plugin) ValidateInitialization() error { return p.upstream.ValidateInitialization() }

// Admit runs upstream's Admit on a write whose objects are the API
// server's (k8s.io/api types, dnsplane's *v1.Pod for pods; Object nil on
// delete, OldObject nil on create). Users that are not nodes, and kinds
// the plugin leaves alone, pass before anything is converted or waited
// for. A node's write otherwise waits for the informers (up to 10s and ctx)
// and is refused with kube's 403 if they have not listed by then or were
// never given; the plugin does not mutate, so the converted objects are
// not copied back.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if _, isNode := p.ids.NodeIdentity(a.GetUserInfo()); !isNode {
		return nil
	}
	if !restricted[a.GetResource().GroupResource()] {
		// Upstream refuses a node it cannot name here, and lets the rest
		// through untouched.
		return p.upstream.Admit(ctx, a, o)
	}
	if err := p.ready(ctx); err != nil {
		return admission.NewForbidden(a, err)
	}
	in, err := host.Attributes(a, toInternal)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("%s: %w", PluginName, err))
	}
	return p.upstream.Admit(ctx, in, o)
}

// ready waits until every informer upstream reads has listed once:
// before, its listers answer "not found" for objects that exist.
func (p *Plugin) ready(ctx context.Context) error {
	return host.WaitSynced(ctx, p.upstream.ValidateInitialization(), p.hasSynced)
}

func (p *Plugin) hasSynced() bool {
	for _, s := range p.synced {
		if !s() {
			return false
		}
	}
	return true
}

// toInternal converts a served object with upstream's conversions
// (internal/registry/upstream's scheme, kube-apiserver's legacyscheme).
func toInternal(obj runtime.Object) (runtime.Object, error) {
	if pod, ok := obj.(*dpcorev1.Pod); ok {
		// dnsParams has no upstream field: no rule of NodeRestriction
		// could read it.
		obj = &corev1.Pod{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec.PodSpec, Status: pod.Status}
	}
	out, err := upstream.Scheme().ConvertToVersion(obj, runtime.InternalGroupVersioner)
	if err != nil {
		return nil, fmt.Errorf("converting %T to kube's internal type: %w", obj, err)
	}
	return out, nil
}
