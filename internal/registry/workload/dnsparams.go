package workload

import (
	"context"
	"reflect"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
)

// PrepareForCreate applies upstream's defaults, then mirrors dnsParams
// (MirrorDNSParams) on the defaulted policy.
func (s Strategy[I]) PrepareForCreate(ctx context.Context, obj any) {
	s.Strategy.PrepareForCreate(ctx, obj)
	MirrorDNSParams(obj, nil)
}

// PrepareForUpdate keeps the stored status, applies upstream's defaults,
// then mirrors dnsParams (MirrorDNSParams) against the stored object, so
// the kind's own preparation (a DaemonSet's template generation) compares
// templates with the field in place.
func (s Strategy[I]) PrepareForUpdate(ctx context.Context, obj, old any) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	MirrorDNSParams(obj, old)
}

// MirrorDNSParams keeps every pod spec obj carries and the dnsParams
// annotation on the spec's metadata (the template's, a Pod's own) in step;
// old is the stored object on update, nil on create. Upstream's controllers
// know no spec.dnsParams: they create objects without it and send full
// updates without it, but copy the template's annotations into what they
// create and into their template hashes and revisions. So, per spec
// (docs/pod-dns.md, "dnsParams and controllers"):
//
//   - the field set: the annotation is (re)written from it; the field wins.
//   - the field absent on create: it is restored from the annotation (a
//     ReplicaSet the deployment controller makes, a pod the ReplicaSet
//     controller makes, a Job from a CronJob).
//   - the field absent on update: with the annotation unchanged the stored
//     field is kept (a controller's PUT); with a new annotation it is
//     restored from it (kubectl rollout undo copies an old ReplicaSet's
//     template back); with the annotation removed it stays removed.
//   - the field absent with a policy other than Custom: nothing is
//     restored and the annotation is dropped (the user switched policy).
//
// An annotation that does not decode is left for validation to report
// (validation.ValidateDNSParamsAnnotation): preparation cannot fail.
func MirrorDNSParams(obj, old any) {
	var olds []api.PodSpecAt
	if old != nil && reflect.TypeOf(old) == reflect.TypeOf(obj) {
		olds = api.PodSpecs(old)
	}
	for i, at := range api.PodSpecs(obj) {
		var prev *api.PodSpecAt
		// As validation pairs them: only the spec at the same place.
		if i < len(olds) && olds[i].Path.String() == at.Path.String() {
			prev = &olds[i]
		}
		mirror(at, prev)
	}
}

func mirror(at api.PodSpecAt, old *api.PodSpecAt) {
	spec, meta := at.Spec, at.Meta
	if spec.DNSParams == nil {
		if spec.DNSPolicy != dpcorev1.DNSCustom {
			if _, ok := meta.Annotations[dnsparams.Annotation]; ok {
				delete(meta.Annotations, dnsparams.Annotation)
				if len(meta.Annotations) == 0 {
					meta.Annotations = nil
				}
			}
			return
		}
		spec.DNSParams = restore(meta.Annotations, old)
	}
	if spec.DNSParams == nil {
		return
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[dnsparams.Annotation] = dnsparams.Encode(spec.DNSParams)
}

// restore is the dnsParams of a spec sent without them, from its
// annotations and the stored spec; nil when there are none to give it, or
// when the annotation does not decode.
func restore(annotations map[string]string, old *api.PodSpecAt) *dpcorev1.PodDNSParams {
	value, annotated := annotations[dnsparams.Annotation]
	if old != nil && old.Spec.DNSParams != nil {
		prev, prevAnnotated := old.Meta.Annotations[dnsparams.Annotation]
		switch {
		case annotated == prevAnnotated && value == prev:
			return old.Spec.DNSParams.DeepCopy()
		case !annotated:
			return nil
		}
	}
	if !annotated {
		return nil
	}
	p, err := dnsparams.Decode(value)
	if err != nil {
		return nil
	}
	return p
}
