package validation

import (
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
)

// Limits from libc name resolution, as upstream's validatePodDNSConfig (k/k
// pkg/apis/core/validation/validation.go). They apply
// to the list as written; the node agent enforces them again after
// $(HOST) expansion, like kubelet.
const (
	maxSearchPaths     = 32
	maxSearchListChars = 2048

	msgTooManySearchPaths = "must not have more than 32 search paths"
	msgSearchListTooLong  = "must not have more than 2048 characters (including spaces) in the search list"
)

// checkSearch returns the domain to report and why s cannot be a search
// entry (no messages when it can). One trailing dot is dropped because it
// only marks the name absolute. A lone "." is legal only in relaxed mode
// (KEP-4427), and is skipped before trimming since the relaxed check itself
// rejects the empty name it would trim to.
func checkSearch(s string, relaxed bool) (string, []string) {
	if relaxed && s == "." {
		return s, nil
	}
	t := strings.TrimSuffix(s, ".")
	if relaxed {
		return t, utilvalidation.IsDNS1123SubdomainWithUnderscore(t)
	}
	return t, utilvalidation.IsDNS1123Subdomain(t)
}

// failsStrict reports whether s would be rejected by the pre-KEP-4427 rules.
func failsStrict(s string) bool {
	_, msgs := checkSearch(s, false)
	return len(msgs) > 0
}

// relaxedSearch decides between strict and relaxed search checks by the
// KEP-4427 Proposal: relaxed when the gate is on (c, d), or, with the gate
// off, on an update whose old object holds any search string that fails
// strict validation (b); strict otherwise (a).
//
// Upstream approximates (b) by looking for "_" or a lone "."; every such
// value fails strict validation, so this accepts everything upstream accepts,
// plus updates of objects holding other strict-invalid values (upper case,
// empty labels, over-long names) that the KEP's rule also covers.
//
// The ratchet is whole-object, as upstream's: one legacy value relaxes every
// search string of the update, in dnsConfig and dnsParams alike, so users can
// edit a list that already contains a legacy entry.
func relaxedSearch(old *dpcorev1.PodSpec, gate bool) bool {
	if gate {
		return true
	}
	if old == nil {
		return false
	}
	if old.DNSConfig != nil {
		for _, s := range old.DNSConfig.Searches {
			if failsStrict(s) {
				return true
			}
		}
	}
	if old.DNSParams != nil && old.DNSParams.Custom != nil {
		for _, e := range old.DNSParams.Custom.Search {
			// $(HOST) comes from the node, so it is no stored search string.
			if !dnsparams.IsHost(e) && failsStrict(dnsparams.Placeholder(e)) {
				return true
			}
		}
	}
	return false
}

// validateSearchLimits checks the size of a search list. The length counts
// the raw strings joined by single spaces, trailing dots included, because
// that is what ends up on the resolv.conf search line.
func validateSearchLimits(list []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(list) > maxSearchPaths {
		errs = append(errs, field.Invalid(fldPath, list, msgTooManySearchPaths))
	}
	if len(strings.Join(list, " ")) > maxSearchListChars {
		errs = append(errs, field.Invalid(fldPath, list, msgSearchListTooLong))
	}
	return errs
}
