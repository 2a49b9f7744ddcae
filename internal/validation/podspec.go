package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
)

// ValidatePodSpecDNS validates the DNS fields of spec (dnsPolicy, dnsConfig,
// dnsParams) at fldPath, the PodSpec's path. old is the same pod spec before
// an update, nil on create; it drives the ratchets. Every problem is
// reported: a rejected policy does not stop the checks of the other fields.
func ValidatePodSpecDNS(spec, old *dpcorev1.PodSpec, fldPath *field.Path, opts Options) field.ErrorList {
	if spec == nil {
		return nil
	}
	relaxed := relaxedSearch(old, opts.RelaxedDNSSearchValidation)
	kept := keptWordsOf(old)
	var errs field.ErrorList
	errs = append(errs, validateDNSPolicy(spec.DNSPolicy, old, fldPath.Child("dnsPolicy"), opts)...)
	errs = append(errs, validateDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"), relaxed, kept)...)
	errs = append(errs, validateDNSParams(spec.DNSParams, spec.DNSPolicy, fldPath.Child("dnsParams"), relaxed, kept)...)
	return errs
}
