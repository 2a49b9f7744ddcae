package validation

import (
	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const maxNameservers = 3

// validateDNSConfig checks spec.dnsConfig with upstream's rules, order and
// messages (validatePodDNSConfig in k/k pkg/apis/core/validation). ClusterFirstWithAutopath and Custom pods may
// carry a dnsConfig too; the node agent merges it as for ClusterFirst.
func validateDNSConfig(cfg *corev1.PodDNSConfig, policy corev1.DNSPolicy, fldPath *field.Path, relaxed bool, kept keptWords) field.ErrorList {
	nsPath := fldPath.Child("nameservers")
	if policy == corev1.DNSNone {
		// Without nameservers a None pod has no resolver at all, and the
		// checks below would only add noise to that.
		if cfg == nil {
			return field.ErrorList{field.Required(fldPath, "must provide `dnsConfig` when `dnsPolicy` is None")}
		}
		if len(cfg.Nameservers) == 0 {
			return field.ErrorList{field.Required(nsPath, "must provide at least one DNS nameserver when `dnsPolicy` is None")}
		}
	}
	if cfg == nil {
		return nil
	}

	var errs field.ErrorList
	if len(cfg.Nameservers) > maxNameservers {
		errs = append(errs, field.Invalid(nsPath, cfg.Nameservers, "must not have more than 3 nameservers"))
	}
	for i, ns := range cfg.Nameservers {
		// Legacy-field parsing, not strict: stored pods may hold
		// non-canonical addresses that upstream has always accepted.
		errs = append(errs, utilvalidation.IsValidIPForLegacyField(nsPath.Index(i), ns, false, nil)...)
	}

	searchPath := fldPath.Child("searches")
	errs = append(errs, validateSearchLimits(cfg.Searches, searchPath)...)
	for i, s := range cfg.Searches {
		bad, msgs := checkSearch(s, relaxed)
		for _, msg := range msgs {
			errs = append(errs, field.Invalid(searchPath.Index(i), bad, msg))
		}
	}

	for i, opt := range cfg.Options {
		optPath := fldPath.Child("options").Index(i)
		if opt.Name == "" {
			errs = append(errs, field.Required(optPath, "must not be empty"))
		} else {
			// Stricter than kube-apiserver, which takes any name and
			// value: both go into the pod's resolv.conf as they are
			// (docs/pod-dns.md, "Rules").
			errs = append(errs, validateWord(opt.Name, optPath.Child("name"), kept)...)
		}
		if opt.Value != nil && *opt.Value != "" {
			errs = append(errs, validateWord(*opt.Value, optPath.Child("value"), kept)...)
		}
	}
	return errs
}
