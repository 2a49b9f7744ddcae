package resolvconf

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/dnsplane/dnsplane/plugin/pkg/hostresolv"
)

// appendDNSConfig applies spec.dnsConfig on top of a policy's base the way
// kubelet does: pod servers and searches go after the base ones (so limits
// cut them first) and pod options override base options of the same name.
func appendDNSConfig(base Config, dc *corev1.PodDNSConfig) Config {
	return Config{
		Nameservers: omitDuplicates(append(base.Nameservers, dc.Nameservers...)),
		Searches:    omitDuplicates(append(base.Searches, dc.Searches...)),
		Options:     mergeOptions(base.Options, dc.Options),
	}
}

// omitDuplicates keeps the first occurrence: a repeated server or search
// path only costs a resolver another identical query.
func omitDuplicates(in []string) []string {
	if len(in) == 0 {
		return in
	}
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// mergeOptions re-renders base options through name/value pairs, as kubelet
// does ("a:" becomes "a"), so base and pod options compare by name alone.
// Base names keep their position; new pod names follow in pod order.
func mergeOptions(base []string, pod []corev1.PodDNSConfigOption) []string {
	var set hostresolv.OptionSet
	for _, o := range base {
		name, value, _ := strings.Cut(o, ":")
		set.Set(name, formatOption(name, value))
	}
	for _, o := range pod {
		value := ""
		if o.Value != nil {
			value = *o.Value
		}
		set.Set(o.Name, formatOption(o.Name, value))
	}
	return set.List()
}

func formatOption(name, value string) string {
	if value == "" {
		return name
	}
	return name + ":" + value
}
