// Package workload is what every kind that carries pod templates shares
// (Pod, PodTemplate, ReplicationController, Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job, CronJob): upstream's defaulting and
// validation through the k8s.io/api view of dnsplane's type, with upstream's
// pod DNS errors replaced by dnsplane's rules and their ratchets
// (docs/pod-dns.md) for each pod spec the object carries, so that a template
// is held to what a pod made from it must meet.
package workload

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/registry/rest"
	"github.com/dnsplane/dnsplane/internal/registry/upstream"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// Strategy is the strategy of a pod template carrier whose internal
// (k8s.io/kubernetes) type is I.
type Strategy[I any] struct {
	upstream.Strategy[I]
	// DNS are the pod DNS rules the feature gates enable.
	DNS validation.Options
	// Generation is the kind's rule for a new generation (upstream's
	// PrepareForUpdate); nil is rest.SpecChanged, the rule of most of
	// them.
	Generation func(obj, old any) bool
}

var (
	_ rest.Strategy     = Strategy[struct{}]{}
	_ rest.Generational = Strategy[struct{}]{}
)

// GenerationChanged applies the kind's generation rule: every pod template
// carrier keeps a generation in kube-apiserver.
func (s Strategy[I]) GenerationChanged(obj, old any) bool {
	if s.Generation != nil {
		return s.Generation(obj, old)
	}
	return rest.SpecChanged(obj, old)
}

// StatusKeepsAnnotations is true: upstream's status strategies of every pod
// template carrier (and of pods) reset the spec but keep the request's
// annotations.
func (Strategy[I]) StatusKeepsAnnotations() bool { return true }

// Validate runs upstream's validation with dnsplane's pod DNS rules in
// place of upstream's.
func (s Strategy[I]) Validate(ctx context.Context, obj any) field.ErrorList {
	return ReplaceDNS(s.Strategy.Validate(ctx, obj), obj, nil, s.DNS)
}

// ValidateUpdate runs upstream's update validation with dnsplane's pod DNS
// rules in place of upstream's, ratcheting against old: a value the stored
// object already held stays accepted (KEP-4427).
func (s Strategy[I]) ValidateUpdate(ctx context.Context, obj, old any) field.ErrorList {
	return ReplaceDNS(s.Strategy.ValidateUpdate(ctx, obj, old), obj, old, s.DNS)
}

// ReplaceDNS drops upstream's errors about the pod DNS fields dnsplane
// changes (dnsPolicy, which dnsplane extends with Custom and
// ClusterFirstWithAutopath, and dnsConfig, whose searches follow KEP-4427
// with ratcheting) at every pod spec obj carries, and puts dnsplane's
// (internal/validation, upstream's wording) where the first dropped one
// was, or after upstream's when none was dropped. Errors about anything
// else, such as a pod update that changes spec.dnsPolicy (reported at
// spec), are upstream's and stay.
func ReplaceDNS(errs field.ErrorList, obj, old any, opts validation.Options) field.ErrorList {
	var prefixes []string
	for _, at := range api.PodSpecs(obj) {
		prefixes = append(prefixes, at.Path.Child("dnsPolicy").String(), at.Path.Child("dnsConfig").String())
	}
	ours := validation.ValidateObjectDNS(obj, old, opts)
	out := make(field.ErrorList, 0, len(errs)+len(ours))
	at := -1
	for _, e := range errs {
		if under(e.Field, prefixes) {
			if at < 0 {
				at = len(out)
			}
			continue
		}
		out = append(out, e)
	}
	if at < 0 {
		return append(out, ours...)
	}
	return slices.Insert(out, at, ours...)
}

// under reports whether path is one of prefixes or inside one.
func under(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(path, p); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return true
		}
	}
	return false
}

// TemplateView is the k8s.io/api pod template sharing t's metadata and pod
// spec (dnsParams aside).
func TemplateView(t *dpcorev1.PodTemplateSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: t.ObjectMeta, Spec: t.Spec.PodSpec}
}

// SetTemplate copies v, a defaulted TemplateView, back into t.
func SetTemplate(t *dpcorev1.PodTemplateSpec, v corev1.PodTemplateSpec) {
	t.ObjectMeta, t.Spec.PodSpec = v.ObjectMeta, v.Spec
}
