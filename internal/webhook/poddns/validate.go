package poddns

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/validation"
)

// gates are dnsplane's validation gates as a stock cluster gets them with
// the webhook installed: both policies on, and KEP-4427's relaxed search
// strings, which kube-apiserver 1.37 accepts by default (the gate is on).
var gates = validation.Options{RelaxedDNSSearchValidation: true, PodDNSCustomPolicy: true, PodDNSAutopath: true}

// Validate checks every pod spec of obj (a pointer to one of dnsplane's
// api types) as dnsplane's API server would, with the same rules, messages
// and field paths: the specs are first restored (Restore) to the policy
// and dnsParams the server would hold, so a rewritten spec is judged as
// what it stands for. old is the stored object on update, nil on create.
// Both are modified.
func Validate(obj, old any) field.ErrorList {
	var errs field.ErrorList
	for _, at := range api.PodSpecs(obj) {
		errs = append(errs, validatePolicyAnnotation(at)...)
		Restore(at)
	}
	if old != nil {
		for _, at := range api.PodSpecs(old) {
			Restore(at)
		}
	}
	for _, e := range validation.ValidateObjectDNS(obj, old, gates) {
		errs = append(errs, hint(e, obj))
	}
	return errs
}

// validatePolicyAnnotation refuses a PolicyAnnotation the webhook did not
// write: only it sets the key, with one of Policies.
func validatePolicyAnnotation(at api.PodSpecAt) field.ErrorList {
	v, ok := at.Meta.Annotations[PolicyAnnotation]
	if !ok {
		return nil
	}
	var valid []string
	for _, p := range Policies() {
		valid = append(valid, string(p))
	}
	if !slices.Contains(valid, v) {
		return field.ErrorList{field.NotSupported(at.MetaPath.Child("annotations").Key(PolicyAnnotation), v, valid)}
	}
	return nil
}

// hint makes "dnsParams: Required value" say where the parameters go on a
// stock cluster, whose API server drops spec.dnsParams: the path stays the
// one dnsplane's API server reports, the detail names the annotation.
func hint(e *field.Error, obj any) *field.Error {
	if e.Type != field.ErrorTypeRequired {
		return e
	}
	for _, at := range api.PodSpecs(obj) {
		if e.Field != at.Path.Child("dnsParams").String() || at.Spec.DNSPolicy != dpcorev1.DNSCustom {
			continue
		}
		out := *e
		out.Detail = fmt.Sprintf("%s: put them, as JSON, in the annotation %s on %s, e.g. %s: '{\"custom\":{\"search\":[\"$(NAMESPACE).svc.$(CLUSTER)\"]}}'",
			e.Detail, ParamsAnnotation, at.MetaPath, ParamsAnnotation)
		return &out
	}
	return e
}
