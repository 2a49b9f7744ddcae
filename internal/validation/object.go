package validation

import (
	"reflect"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/dnsplane/dnsplane/api"
	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
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
		errs = append(errs, ValidatePodSpecDNS(s.Spec, o, s.Path, opts)...)
	}
	return errs
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
