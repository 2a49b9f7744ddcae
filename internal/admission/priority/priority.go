// Package priority hosts kube-apiserver's Priority admission plugin
// (k8s.io/kubernetes/plugin/pkg/admission/priority) over the objects
// dnsplane's API server serves: a pod create gets spec.priority and
// spec.preemptionPolicy from the PriorityClass its spec.priorityClassName
// names (or the globalDefault class, or priority 0 without one), a class
// that does not exist is refused, a pod update keeps the priority the
// create gave, and a second globalDefault PriorityClass is refused
// (docs/apiserver.md, "Admission").
//
// The rules, messages and lookups are upstream's own code; what this
// package adds is what kube-apiserver's admission chain does around it:
// the objects are converted to kube's internal types (dnsplane serves v1
// objects, and its Pod carries dnsParams), what upstream sets on the
// internal pod is copied back to the served one, and a write that reads
// the PriorityClass informer waits for it to have listed once, as kube's
// plugins with a ReadyFunc do (admission.Handler.WaitForReady).
package priority

import (
	"context"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/admission/host"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
)

// PluginName is upstream's: the name kube-apiserver's
// --enable-admission-plugins and its admission metrics use.
const PluginName = priority.PluginName

var (
	pods            = schema.GroupResource{Resource: "pods"}
	priorityClasses = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "priorityclasses"}
)

// Plugin is upstream's Priority with dnsplane's objects. It is initialised
// as kube-apiserver initialises upstream's (the initializer interfaces
// below, k8s.io/apiserver/pkg/admission/initializer): the informers and
// the client upstream's ValidateInitialization asks for. It takes no
// feature gates: upstream reads them (GenericWorkload, CompositePodGroup)
// only for PodGroups, which dnsplane does not serve. Use New.
type Plugin struct {
	upstream *priority.Plugin
	// synced is the PriorityClass informer's HasSynced; nil until
	// SetExternalKubeInformerFactory.
	synced cache.InformerSynced
	// listed is set once synced has answered true, after which it always
	// would (an informer does not unsync): creates skip asking.
	listed atomic.Bool
}

var (
	_ admission.MutationInterface                  = (*Plugin)(nil)
	_ admission.ValidationInterface                = (*Plugin)(nil)
	_ admission.InitializationValidator            = (*Plugin)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
	_ initializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
)

// New returns upstream's plugin, not yet initialised: until it has its
// informers and client it refuses every pod create and every globalDefault
// PriorityClass write.
func New() *Plugin { return &Plugin{upstream: priority.NewPlugin()} }

// Handles is create and update. Upstream's handler also takes deletes, on
// which its Admit and Validate return at once (they act on pod creates and
// updates, PodGroup and CompositePodGroup creates, which dnsplane does not
// serve, and PriorityClass creates and updates), so the chain skips it on
// deletes without changing an answer.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// SetExternalKubeInformerFactory gives upstream's plugin its PriorityClass
// lister from f, whose informers the caller starts (registering one after
// f.Start would leave it stopped). A nil f is ignored: the plugin stays
// uninitialised.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	if f == nil {
		return
	}
	p.upstream.SetExternalKubeInformerFactory(f)
	// The informer upstream just took its lister and ReadyFunc of.
	p.synced = f.Scheduling().V1().PriorityClasses().Informer().HasSynced
}

// SetExternalKubeClientSet is upstream's: it reads nothing through c, but
// its ValidateInitialization asks for one.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) {
	if c != nil {
		p.upstream.SetExternalKubeClientSet(c)
	}
}

// ValidateInitialization is upstream's.
func (p *Plugin) ValidateInitialization() error { return p.upstream.ValidateInitialization() }

// Admit runs upstream's Admit on a pod create or update whose objects are
// dnsplane's *v1.Pod, and copies back what upstream sets: the pod's
// spec.priorityClassName, spec.priority and spec.preemptionPolicy, and
// nothing else (upstream sets nothing else). Subresources and other kinds
// pass before anything is converted. A create waits for the PriorityClass
// informer (up to 10s and ctx) and is refused with kube's 403 if it has
// not listed by then; an update reads nothing but the old pod, so it does
// not wait.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" || a.GetResource().GroupResource() != pods {
		return nil
	}
	pod, ok := a.GetObject().(*dpcorev1.Pod)
	if !ok {
		// Upstream's answer for a pod it cannot read.
		return apierrors.NewBadRequest("resource was marked with kind Pod but was unable to be converted")
	}
	if a.GetOperation() == admission.Create {
		if err := p.ready(ctx); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	in, err := host.Attributes(a, toInternal)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("%s: %w", PluginName, err))
	}
	if err := p.upstream.Admit(ctx, in, o); err != nil {
		return err
	}
	ipod, ok := in.GetObject().(*core.Pod)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("%s: converted %T to %T, want *core.Pod", PluginName, pod, in.GetObject()))
	}
	copyBack(pod, &ipod.Spec)
	return nil
}

// copyBack sets the three fields upstream's admitPod writes on the
// internal pod into the served one; core.PreemptionPolicy and
// corev1.PreemptionPolicy are the same strings.
func copyBack(pod *dpcorev1.Pod, spec *core.PodSpec) {
	pod.Spec.PriorityClassName = spec.PriorityClassName
	pod.Spec.Priority = spec.Priority
	pod.Spec.PreemptionPolicy = nil
	if spec.PreemptionPolicy != nil {
		pp := corev1.PreemptionPolicy(*spec.PreemptionPolicy)
		pod.Spec.PreemptionPolicy = &pp
	}
}

// Validate runs upstream's Validate on a PriorityClass create or update:
// one marked globalDefault is refused while another is. Only such a write
// reads the informer, so only it waits for it (the system classes the API
// server ensures at start, before its informers run, are not
// globalDefault).
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" || a.GetResource().GroupResource() != priorityClasses {
		return nil
	}
	pc, ok := a.GetObject().(*schedulingv1.PriorityClass)
	if !ok {
		return apierrors.NewBadRequest("resource was marked with kind PriorityClass but was unable to be converted")
	}
	if !pc.GlobalDefault {
		// Upstream reads nothing and allows it: skip the conversion.
		return nil
	}
	if err := p.ready(ctx); err != nil {
		return admission.NewForbidden(a, err)
	}
	in, err := host.Attributes(a, toInternal)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("%s: %w", PluginName, err))
	}
	return p.upstream.Validate(ctx, in, o)
}

// ready waits until the PriorityClass informer has listed once: before,
// its lister answers "not found" for the system classes and sees no
// globalDefault. kube-apiserver keeps /readyz failing until its informers
// sync (the informer-sync check), so load-balanced clients do not meet
// that; `up`'s agents dial the server directly, so here the request waits
// instead.
func (p *Plugin) ready(ctx context.Context) error {
	if p.listed.Load() {
		return nil
	}
	if err := host.WaitSynced(ctx, p.upstream.ValidateInitialization(), p.synced); err != nil {
		return err
	}
	p.listed.Store(true)
	return nil
}

// toInternal converts a served object with upstream's conversions
// (internal/registry/upstream's scheme, kube-apiserver's legacyscheme),
// on a copy: what upstream sets reaches the served object only through
// copyBack.
func toInternal(obj runtime.Object) (runtime.Object, error) {
	convert := upstream.Scheme().ConvertToVersion
	if pod, ok := obj.(*dpcorev1.Pod); ok {
		// dnsParams has no upstream field, and upstream reads only the
		// spec's priority fields: it stays on the served pod untouched.
		// The k8s.io/api pod is the copy, so the conversion need not make
		// another (it is half of the plugin's cost,
		// BenchmarkAdmitPodCreate).
		c := &corev1.Pod{}
		pod.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
		pod.Spec.PodSpec.DeepCopyInto(&c.Spec)
		pod.Status.DeepCopyInto(&c.Status)
		obj, convert = c, upstream.Scheme().UnsafeConvertToVersion
	}
	out, err := convert(obj, runtime.InternalGroupVersioner)
	if err != nil {
		return nil, fmt.Errorf("converting %T to kube's internal type: %w", obj, err)
	}
	return out, nil
}
