package validation

import (
	"errors"
	"reflect"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
)

// ValidateObjectDNS validates every pod spec obj carries (Pod, PodTemplate,
// ReplicationController, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
// CronJob, as pointers to the dnsplane api types), with field paths rooted at
// the object. old is the stored object on update (same type) or nil on
// create. Kinds without a pod spec yield nil.
func ValidateObjectDNS(obj, old any, opts Options) field.ErrorList {
	specs := api.PodSpecs(obj)
	olds := oldSpecs(obj, old)
	var errs field.ErrorList
	for i, s := range specs {
		var o *dpcorev1.PodSpec
		// Pair by position and path: a spec only ratchets against the one
		// that sat at the same place in the stored object.
		if i < len(olds) && olds[i].Path.String() == s.Path.String() {
			o = olds[i].Spec
		}
		// The annotation first, as kube reports metadata before the spec:
		// an unreadable one is why a spec sent without dnsParams lacks them.
		errs = append(errs, ValidateDNSParamsAnnotation(s)...)
		errs = append(errs, ValidatePodSpecDNS(s.Spec, o, s.Path, opts)...)
	}
	return errs
}

// ValidateDNSParamsAnnotation checks the dnsParams annotation on the
// metadata that goes with a pod spec (docs/pod-dns.md, "dnsParams and
// controllers"). The API server writes it from spec.dnsParams whenever the
// field is set, so only a value that is not the field's encoding can be
// wrong: one a client wrote, which the API server could not turn into the
// field. It must be a JSON object of dnsParams, within the size limit.
func ValidateDNSParamsAnnotation(at api.PodSpecAt) field.ErrorList {
	if at.Meta == nil || at.Spec == nil {
		return nil
	}
	value, ok := at.Meta.Annotations[dnsparams.Annotation]
	if !ok || at.Spec.DNSParams != nil && value == dnsparams.Encode(at.Spec.DNSParams) {
		return nil
	}
	path := at.MetaPath.Child("annotations").Key(dnsparams.Annotation)
	switch _, err := dnsparams.Decode(value); {
	case errors.Is(err, dnsparams.ErrTooLong):
		return field.ErrorList{field.TooLong(path, "", dnsparams.MaxAnnotationBytes)}
	case err != nil:
		return field.ErrorList{field.Invalid(path, value, err.Error())}
	}
	return nil
}

// oldSpecs returns old's pod specs when old can be the stored version of obj.
// An old object of another type is validated as a create: ratcheting against
// a foreign object could let through values it never held, and the stricter
// answer is the safe one for a caller mistake.
func oldSpecs(obj, old any) []api.PodSpecAt {
	if old == nil || reflect.TypeOf(old) != reflect.TypeOf(obj) {
		return nil
	}
	return api.PodSpecs(old)
}
