package validation

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	dpcorev1 "github.com/dnsplane/dnsplane/api/core/v1"
	"github.com/dnsplane/dnsplane/internal/dnsparams"
)

// maxNdots is where glibc and musl clamp ndots; a larger value would be
// silently lowered in the pod, so it is refused instead of surprising.
const maxNdots = 15

const msgBadNdots = "ndots must be an integer between 0 and 15 (glibc and musl cap it at 15)"

// validateDNSParams checks spec.dnsParams against the policy (docs/pod-dns.md, "Rules") and
// validates its content whenever it is present, even when the pairing with
// the policy is already wrong, so one round trip shows every problem.
func validateDNSParams(params *dpcorev1.PodDNSParams, policy corev1.DNSPolicy, fldPath *field.Path, relaxed bool, kept keptWords) field.ErrorList {
	var errs field.ErrorList
	custom := policy == dpcorev1.DNSCustom
	switch {
	case params == nil && custom:
		return field.ErrorList{field.Required(fldPath, "must be set when `dnsPolicy` is Custom")}
	case params == nil:
		return nil
	case !custom:
		errs = append(errs, field.Forbidden(fldPath, "may only be set when `dnsPolicy` is Custom"))
	case params.Custom == nil:
		errs = append(errs, field.Required(fldPath.Child("custom"), "must be set when `dnsPolicy` is Custom"))
	}
	if params.Custom != nil {
		errs = append(errs, validateCustom(params.Custom, fldPath.Child("custom"), relaxed, kept)...)
	}
	return errs
}

func validateCustom(c *dpcorev1.PodDNSParamsCustom, fldPath *field.Path, relaxed bool, kept keptWords) field.ErrorList {
	searchPath := fldPath.Child("search")
	errs := validateSearchLimits(c.Search, searchPath)
	for i, entry := range c.Search {
		errs = append(errs, validateCustomSearch(entry, i, len(c.Search), searchPath.Index(i), relaxed)...)
	}
	for i, opt := range c.Options {
		errs = append(errs, validateCustomOption(opt, fldPath.Child("options").Index(i), kept)...)
	}
	return errs
}

// validateCustomSearch reports substitution mistakes first: the domain check
// of a malformed substitution would only repeat the problem less clearly.
// The domain check runs on the entry with its substitutions replaced by a
// placeholder label, since their values are not known until the pod is
// placed; the error still shows what the user wrote.
func validateCustomSearch(entry string, i, n int, fldPath *field.Path, relaxed bool) field.ErrorList {
	if err := dnsparams.Check(entry, i, n); err != nil {
		return field.ErrorList{field.Invalid(fldPath, entry, err.Error())}
	}
	if dnsparams.IsHost(entry) {
		return nil
	}
	var errs field.ErrorList
	_, msgs := checkSearch(dnsparams.Placeholder(entry), relaxed)
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(fldPath, entry, msg))
	}
	return errs
}

// validateCustomOption checks ndots, and that every option stays one word
// of the options line: other options go to the options line unmodified,
// as dnsConfig option values do upstream, and a newline in one would add
// a line of its own to the pod's resolv.conf (which the node agent then
// refuses, so the pod would never start).
func validateCustomOption(opt string, fldPath *field.Path, kept keptWords) field.ErrorList {
	if opt == "" {
		return field.ErrorList{field.Required(fldPath, "must not be empty")}
	}
	name, value, hasValue := strings.Cut(opt, ":")
	if name == "ndots" && (!hasValue || !validNdots(value)) {
		return field.ErrorList{field.Invalid(fldPath, opt, msgBadNdots)}
	}
	return validateWord(opt, fldPath, kept)
}

// validNdots accepts plain decimal digits only: a sign or space would be
// read differently by different resolvers.
func validNdots(v string) bool {
	if v == "" || len(v) > 3 {
		return false
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(v)
	return err == nil && n <= maxNdots
}
